import { randomUUID } from 'node:crypto';
import { SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { JobSpecSchema, kindOf } from '../kinds/registry';
import { describeRefusedOverrides, type OverridePolicy, refusedOverrides } from '../domain/overridePolicy';
import { encodeJobBody } from '../domain/jobBody';
import { describeIssues } from '../domain/zodIssues';
import type { KnownJob } from '../inspect/jobs';

export interface EnqueueReport {
  sent: string[];
  rejected: Array<{ index: number; reason: string }>;
  /**
   * The ids sent that the ledger knew before they were sent (ran, running or waiting: each id runs once, so these run
   * nothing); present when the table could be read.
   */
  known?: KnownJob[];
}

/** SQS takes at most 10 messages per SendMessageBatch. */
const BATCH = 10;

/**
 * Sends job specs to the job queue, 10 per request. Each spec is checked with the same schema the acquirer uses, so a
 * bad one is reported here instead of landing in the DLQ; a spec without an id gets one (the idempotency key).
 * With the stage's `overrides` policy, a spec overriding what the stage does not allow is refused too. `notBefore` (--at) is set on every spec. Jobs are sent at once whatever their notBefore: the acquirer records each
 * (so it can be cancelled) and holds it until then, on an SQS delay or the due index. With `known`, the ids the
 * ledger already has are reported (they are sent all the same: the acquirer drops them).
 */
export async function enqueueJobs(
  sqs: SQSClient,
  queueUrl: string,
  specs: unknown[],
  options: { notBefore?: string; overrides?: OverridePolicy; known?: (ids: string[]) => Promise<KnownJob[] | undefined> } = {},
): Promise<EnqueueReport> {
  const report: EnqueueReport = { sent: [], rejected: [] };
  const valid: Array<{ index: number; id: string; body: string }> = [];
  specs.forEach((spec, index) => {
    const isObject = spec && typeof spec === 'object' && !Array.isArray(spec);
    const withId = isObject && !('id' in spec) ? { ...spec, id: randomUUID() } : spec;
    // --at: the same notBefore on every job of the file (the acquirer holds each until then; see README).
    const timed = isObject && options.notBefore !== undefined ? { ...(withId as object), notBefore: options.notBefore } : withId;
    const parsed = JobSpecSchema.safeParse(timed);
    if (!parsed.success) {
      report.rejected.push({ index, reason: describeIssues(parsed.error, '(spec)') });
      return;
    }
    // The stage's override policy, when the stage is known: a refused override is said here, not in the DLQ.
    if (options.overrides) {
      const refused = refusedOverrides(
        parsed.data.kind,
        kindOf(parsed.data.kind).overrides?.(parsed.data as never) ?? [],
        options.overrides,
      );
      if (refused.length > 0) {
        report.rejected.push({ index, reason: describeRefusedOverrides(refused) });
        return;
      }
    }
    valid.push({ index, id: parsed.data.id, body: encodeJobBody(parsed.data) });
  });
  // Read before sending: once sent, the acquirer may register them at any moment.
  if (options.known && valid.length > 0) {
    const known = await options.known(valid.map((v) => v.id));
    if (known) report.known = known;
  }
  for (let i = 0; i < valid.length; i += BATCH) {
    const chunk = valid.slice(i, i + BATCH);
    const out = await sqs.send(
      new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: chunk.map((m, j) => ({ Id: String(j), MessageBody: m.body })) }),
    );
    for (const ok of out.Successful ?? []) report.sent.push(chunk[Number(ok.Id)]!.id);
    for (const failed of out.Failed ?? [])
      report.rejected.push({ index: chunk[Number(failed.Id)]!.index, reason: `${failed.Code}: ${failed.Message ?? ''}` });
  }
  return report;
}

/** Reads job specs from JSON (one spec or an array) or JSONL (one spec per line). */
export function parseSpecFile(text: string): unknown[] {
  const trimmed = text.trim();
  if (trimmed === '') return [];
  try {
    const parsed: unknown = JSON.parse(trimmed);
    return Array.isArray(parsed) ? parsed : [parsed];
  } catch {
    // Numbered by the file's own lines, blank ones included, so the number leads to the line in an editor.
    return text
      .split(/\r?\n/)
      .map((line, i) => ({ line, number: i + 1 }))
      .filter(({ line }) => line.trim() !== '')
      .map(({ line, number }) => {
        try {
          return JSON.parse(line) as unknown;
        } catch {
          throw new Error(`line ${number} is not JSON: ${line.slice(0, 80)}`);
        }
      });
  }
}
