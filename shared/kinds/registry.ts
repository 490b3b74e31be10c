import * as z from 'zod';
import { appflow } from './appflow';
import { callback } from './callback';
import { glue } from './glue';
import { sfn } from './sfn';
import { ecs } from './ecs';
import { batch } from './batch';
import type { KindDefinition } from './kindDefinition';

/**
 * Every job kind Sluice can gate: one line each. Adding a kind is a folder of shared/kinds/ and a line here, plus its
 * rules and IAM statements in serverless.yml (test/component/package/kinds.test.ts fails until they match).
 */
export const KINDS = [appflow, glue, sfn, ecs, batch, callback] as const;

type Definition = (typeof KINDS)[number];

/** A job message: one of the kinds' specs, told apart by `kind`. */
export type JobSpec = z.output<Definition['schema']>;
export const JobSpecSchema = z.discriminatedUnion(
  'kind',
  KINDS.map((k) => k.schema) as unknown as [z.ZodObject, ...z.ZodObject[]],
) as unknown as z.ZodType<JobSpec, z.input<Definition['schema']>>;

/** The kinds by member name: JobKind.AppFlow === 'appflow'. */
export const JobKind = Object.fromEntries(KINDS.map((k) => [k.key, k.kind])) as { readonly [D in Definition as D['key']]: D['kind'] };
export type JobKind = Definition['kind'];

export type AppFlowJob = Extract<JobSpec, { kind: 'appflow' }>;
export type GlueJob = Extract<JobSpec, { kind: 'glue' }>;
export type SfnJob = Extract<JobSpec, { kind: 'sfn' }>;
export type EcsJob = Extract<JobSpec, { kind: 'ecs' }>;
export type BatchJob = Extract<JobSpec, { kind: 'batch' }>;
export type CallbackJob = Extract<JobSpec, { kind: 'callback' }>;

const byKind = new Map<string, KindDefinition>(KINDS.map((k) => [k.kind, k as KindDefinition]));

/** The definition of a kind; throws for a name no kind has (a record written by a newer Sluice). */
export function kindOf(kind: string): KindDefinition {
  const found = byKind.get(kind);
  if (!found) throw new Error(`unknown job kind '${kind}'`);
  return found;
}

export const isJobKind = (kind: string): kind is JobKind => byKind.has(kind);

/** The SDK services of every kind's job API (sdkService and moreSdkServices): the local simulator plays them all. */
export const JOB_API_SERVICES: readonly string[] = [...new Set(KINDS.flatMap((k) => [k.sdkService, ...(k.moreSdkServices ?? [])]))];
