import { z } from 'zod';
import { type Demand, MAX_KEYS_PER_JOB, MAX_WEIGHT } from './limits';
import { MAX_PRIORITY } from './waiting';

/** Job kinds Sluice can start. */
export const JobKind = { AppFlow: 'appflow', Glue: 'glue' } as const;
export type JobKind = (typeof JobKind)[keyof typeof JobKind];

export const DEFAULT_POOL = 'default';

/** Idempotency keys and pool names end up in DynamoDB keys, SQS attributes and AppFlow client tokens. */
const KEY_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:\-]{0,127}$/;
const key = (what: string) => z.string().regex(KEY_PATTERN, `${what} must be 1-128 characters of letters, digits, '.', '_', ':' or '-'`);

const base = {
  id: key('id'),
  pool: key('pool').default(DEFAULT_POOL),
  /** keyed limits the job counts against besides its pool ("org:acme"): it starts only when every one has room */
  limits: z
    .array(key('limit key'))
    .max(MAX_KEYS_PER_JOB, `a job may name at most ${MAX_KEYS_PER_JOB} keyed limits`)
    .refine((keys) => new Set(keys).size === keys.length, 'limits must not repeat a key')
    .optional(),
  /** the units it takes from its pool and from each keyed limit (a Glue job of 10 DPUs in a budget of DPUs) */
  weight: z.number().int('weight must be a whole number').min(1).max(MAX_WEIGHT).optional(),
  /** higher starts first among the jobs waiting in its pool */
  priority: z.number().int('priority must be a whole number').min(-MAX_PRIORITY).max(MAX_PRIORITY).optional(),
  /** jobs with fairness keys take turns (round robin by key) among the waiting jobs of one priority */
  fairnessKey: key('fairnessKey').optional(),
};

/** AppFlow flow names: [a-zA-Z0-9][\w!@#.-]+, at most 256 characters. */
export const AppFlowJobSchema = z
  .object({
    ...base,
    kind: z.literal(JobKind.AppFlow),
    flowName: z.string().regex(/^[a-zA-Z0-9][\w!@#.-]{0,255}$/, 'flowName is not a valid AppFlow flow name'),
  })
  .strict();

/**
 * Characters the Glue API accepts (https://docs.aws.amazon.com/glue/latest/dg/aws-glue-api-common.html, "String
 * patterns"): names follow its "Single-line string pattern" [\u0020-\uD7FF\uE000-\uFFFD\uD800\uDC00-\uDBFF\uDFFF\t]
 * (the surrogate range there means well-formed pairs, U+10000-U+10FFFF). StartJobRun's Arguments (GenericMap) are
 * documented only as "UTF-8 string"; they get the most permissive documented class, the "URI address multi-line string
 * pattern" (the same plus \r and \n). Either way U+FFFE, U+FFFF, lone surrogates and other control characters are out:
 * Glue would refuse the start, so such a spec is refused here, at parse, instead of failing at every start.
 */
const GLUE_NAME_TEXT = /^[\t\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]+$/u;
const GLUE_MULTILINE_TEXT = /^[\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]*$/u;

const glueArguments = z.record(
  z.string().min(1).max(1024).regex(GLUE_MULTILINE_TEXT),
  z
    .string()
    .max(262_144)
    .regex(GLUE_MULTILINE_TEXT, 'argument value has characters Glue rejects (control characters, U+FFFE, U+FFFF or a lone surrogate)'),
  // zod reports a bad key only as "Invalid key in record": say what is wrong.
  {
    error: (issue) =>
      issue.code === 'invalid_key'
        ? 'argument name must be 1-1024 characters Glue accepts (no control characters, U+FFFE, U+FFFF or lone surrogates)'
        : undefined,
  },
);

/** Glue job names: 1-255 characters; arguments are string to string, keys usually start with "--". */
export const GlueJobSchema = z
  .object({
    ...base,
    kind: z.literal(JobKind.Glue),
    jobName: z.string().min(1).max(255).regex(GLUE_NAME_TEXT, 'jobName has characters Glue rejects'),
    arguments: glueArguments.optional(),
  })
  .strict();

export const JobSpecSchema = z.discriminatedUnion('kind', [AppFlowJobSchema, GlueJobSchema]);
export type JobSpec = z.infer<typeof JobSpecSchema>;
export type AppFlowJob = z.infer<typeof AppFlowJobSchema>;
export type GlueJob = z.infer<typeof GlueJobSchema>;

/** Outcome of a finished run, as the completion event or the status API reports it. */
export const RunOutcome = { Succeeded: 'succeeded', Failed: 'failed' } as const;
export type RunOutcome = (typeof RunOutcome)[keyof typeof RunOutcome];

/** A completion event reduced to what the releaser needs. */
export interface RunCompletion {
  kind: JobKind;
  executionId: string;
  outcome: RunOutcome;
  /** flow or job name, for logs */
  name: string;
  detail?: string;
}

/** What the job takes while it holds its slot: its weight in units, from its pool and from each of its keyed limits. */
export function demandOf(spec: Pick<JobSpec, 'pool' | 'limits' | 'weight'>): Demand {
  return { pool: spec.pool, keys: spec.limits ?? [], units: spec.weight ?? 1 };
}
