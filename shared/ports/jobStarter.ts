import type { RunOutcome } from '../domain/job';
import type { JobKind, JobSpec } from '../kinds/registry';

export const RunStatus = {
  InProgress: 'in-progress',
  Succeeded: 'succeeded',
  Failed: 'failed',
  /** the API answered, but nothing in its answer says whether the run goes on (an unrecognised state): keep asking */
  Unknown: 'unknown',
  /**
   * The API can no longer be asked about this run: it answered that the run, or the flow, job, state machine or task
   * it belongs to, does not exist (deleted, or dropped from the API's history after it ended). No event will ever come
   * for it. The reconciler gives its slot back only once that answer cannot be the API's eventual consistency.
   */
  Gone: 'gone',
  /** The run ended without ever starting, for want of capacity (RunOutcome.NotStarted): retry the job like a refused start. */
  NotStarted: 'not-started',
} as const;
export type RunStatus = (typeof RunStatus)[keyof typeof RunStatus];

/** What a stop did (JobStarter.stop). */
export const StopResult = { Stopped: 'stopped', AlreadyEnded: 'already-ended' } as const;
export type StopResult = (typeof StopResult)[keyof typeof StopResult];

export function outcomeOf(status: RunStatus): RunOutcome | undefined {
  if (status === RunStatus.Succeeded) return 'succeeded';
  if (status === RunStatus.Failed) return 'failed';
  if (status === RunStatus.NotStarted) return 'not-started';
  return undefined;
}

export interface StartOptions {
  /** An earlier call for this job may have started a run: find it instead of starting a second one. */
  mayHaveStarted?: boolean;
  /**
   * When the job's first start was requested (ms since the epoch), or any earlier time (e.g. when the job was first
   * seen); never a later one. Its run cannot be older, so the search for it stops at older runs. Without it the search
   * is bounded by a page count only.
   */
  requestedSince?: number;
  /**
   * The job's previous run ended without ever starting (RunOutcome.NotStarted: ECS found no capacity for its task) and
   * the job is started again: start a new run, not that one again. A kind whose idempotency token would answer with the
   * previous run (ECS's client token, kept 24 hours) derives another token from it, the same one on every retry of
   * this start.
   */
  replacesRun?: string;
  /**
   * When the first start call of this run was made (JobRecord.firstStartAt, exactly): the same for every start call of
   * one run, another for a later run of the job id (a new record once the old one expired). A kind that makes its run's
   * id and credentials itself (a callback job's run id and token) binds them to it.
   */
  runSince?: number;
}

export interface StatusOptions {
  /** As StartOptions.requestedSince: the run cannot be older, so the lookup stops at older records. */
  requestedSince?: number;
}

/**
 * Starts and inspects runs of one job kind. `start` throws TransientStartError or PermanentStartError (shared/errors.ts)
 * and must be safe to call again for the same job id: it returns the run a previous call started, if any. When it
 * cannot tell whether an earlier run exists, it throws a TransientStartError with `definite` false rather than start a
 * second one. `status` answers RunStatus.Unknown when it cannot find the run.
 */
export interface JobStarter {
  readonly kind: JobKind;
  start(job: JobSpec, options?: StartOptions): Promise<{ executionId: string }>;
  status(job: JobSpec, executionId: string, options?: StatusOptions): Promise<RunStatus>;
  /**
   * Stops the run. Answers what it did when the API tells (StopResult: stopped, or nothing left to stop); throws a
   * JobApiError when the stop failed and the run may still be going (shared/errors.ts).
   */
  stop(job: JobSpec, executionId: string): Promise<StopResult | void>;
  /**
   * For a kind that knows a job's run id before its start (a callback job's, made from the job id and runSince): the id a start
   * of `job` returns. A job given up after a start of unknown outcome then has that run recorded (`giveUpKeep` and its
   * run reference), so the run's own report gives its slot back. Kinds whose API names a run only when it starts it
   * leave it out (or answer undefined). `options` as the start of that run was given them.
   */
  runIdOf?(job: JobSpec, options?: StartOptions): Promise<string | undefined>;
}

export type JobStarters = Readonly<Record<JobKind, JobStarter>>;
