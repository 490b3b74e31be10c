import * as z from 'zod';
import { type Demand, MAX_KEYS_PER_JOB, MAX_WEIGHT } from './limits';
import { MAX_PRIORITY } from './waiting';

export const DEFAULT_POOL = 'default';

/** The longest run limit a job may declare (runSeconds): 30 days. */
export const MAX_RUN_SECONDS = 30 * 24 * 3600;

/** Idempotency keys and pool names end up in DynamoDB keys, SQS attributes and AppFlow client tokens. */
const KEY_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:\-]{0,127}$/;
const key = (what: string) => z.string().regex(KEY_PATTERN, `${what} must be 1-128 characters of letters, digits, '.', '_', ':' or '-'`);

/**
 * The fields every kind's spec shares (shared/kinds/<kind>/spec.ts spreads them into its schema): identity, pool, keyed
 * limits, weight, priority and fairness.
 */
export const base = {
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
  /**
   * The longest the job holds its units, in seconds (fractions allowed): from being let in to its run's end. With it,
   * the job may start ahead of a heavier job waiting before it when it ends before that job could start anyway
   * (backfill, docs/protocol.md); without it, it keeps strict order.
   */
  runSeconds: z.number().positive().max(MAX_RUN_SECONDS, `runSeconds must be at most ${MAX_RUN_SECONDS} (30 days)`).optional(),
  /** higher starts first among the jobs waiting in its pool */
  priority: z.number().int('priority must be a whole number').min(-MAX_PRIORITY).max(MAX_PRIORITY).optional(),
  /** jobs with fairness keys take turns (round robin by key) among the waiting jobs of one priority */
  fairnessKey: key('fairnessKey').optional(),
  /**
   * Not before this time (ISO 8601 with an offset or Z: "2026-11-27T02:00:00+01:00"): until then the job holds no slot;
   * then it takes one like any other job, its place among waiting jobs counting from this time. In the past: at once.
   */
  notBefore: z.iso
    .datetime({ offset: true, error: 'notBefore must be an ISO 8601 time with an offset or Z, e.g. 2026-11-27T02:00:00+01:00' })
    .optional(),
  /** the job set and run it belongs to (set by the expander of a job set: shared/domain/jobSets.ts) */
  jobSet: z
    .object({ name: key('jobSet.name'), run: key('jobSet.run') })
    .strict()
    .optional(),
};

const BaseSchema = z.object(base);

/**
 * What the rules know of a job message, whatever its kind: the kinds' schemas and their union (JobSpec) live with the
 * kinds (shared/kinds/registry.ts), which compose above the domain; the domain depends on nothing but itself.
 */
export type JobSpecBase = z.output<typeof BaseSchema> & { kind: string };

/** Outcome of a finished run, as the completion event or the status API reports it. */
export const RunOutcome = {
  Succeeded: 'succeeded',
  Failed: 'failed',
  /**
   * The service created the run but it never started, for want of capacity, and nothing of it ran: an ECS task placed
   * through a capacity provider that stopped with TaskFailedToStart and a RESOURCE:* reason. Not a failed run: the
   * job is to be retried like a refused start (its slot given back, the job sent again with backoff).
   */
  NotStarted: 'not-started',
} as const;
export type RunOutcome = (typeof RunOutcome)[keyof typeof RunOutcome];

/** A completion event reduced to what the releaser needs. */
export interface RunCompletion<Kind extends string = string> {
  kind: Kind;
  executionId: string;
  outcome: RunOutcome;
  /** flow or job name, for logs */
  name: string;
  detail?: string;
}

/** What the job takes while it holds its slot: its weight in units, from its pool and from each of its keyed limits. */
export function demandOf(spec: Pick<JobSpecBase, 'pool' | 'limits' | 'weight'>): Demand {
  return { pool: spec.pool, keys: spec.limits ?? [], units: spec.weight ?? 1 };
}

/** The job's declared run limit in ms (runSeconds), undefined when it declares none. */
export function runLimitMsOf(spec: Pick<JobSpecBase, 'runSeconds'>): number | undefined {
  return spec.runSeconds === undefined ? undefined : Math.ceil(spec.runSeconds * 1000);
}
