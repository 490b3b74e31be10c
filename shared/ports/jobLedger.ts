import type { JobKind, JobSpec, RunCompletion } from '../domain/job';
import type { JobState } from '../domain/jobState';

/** One record per job: where it is in its life, for idempotency, the reconciler and people asking "what happened?". */
export interface JobRecord {
  jobId: string;
  pool: string;
  kind: JobKind;
  state: JobState;
  spec: JobSpec;
  attempts: number;
  firstSeenAt: number;
  updatedAt: number;
  startedAt?: number;
  endedAt?: number;
  executionId?: string;
  lastError?: string;
  /** A start call was made at least once: a run may exist even if no answer said so. */
  startRequested?: boolean;
}

export interface TransitionPatch {
  startRequested?: boolean;
  executionId?: string;
  lastError?: string;
  attempts?: number;
  startedAt?: number;
  endedAt?: number;
}

/** Where a run came from: the run's execution id leads back to the job and its pool. */
export interface RunRef {
  kind: JobKind;
  executionId: string;
  jobId: string;
  pool: string;
}

export interface JobLedger {
  /** Records a new job in `queued`; when the job is known already, returns the stored record and changes nothing. */
  register(spec: JobSpec, now: number): Promise<{ created: boolean; record: JobRecord }>;
  get(jobId: string): Promise<JobRecord | undefined>;
  /**
   * Moves the job to `to` only if it is in one of `from` (and, when given, has that execution id). Returns false and
   * changes nothing otherwise, so replays and races cannot move a job backwards.
   */
  transition(
    jobId: string,
    from: readonly JobState[],
    to: JobState,
    now: number,
    patch?: TransitionPatch,
    expectExecutionId?: string,
  ): Promise<boolean>;
  /**
   * Claims a job left in `starting` by a crashed acquirer, if nobody touched it since `seenUpdatedAt`: of several
   * concurrent resumers exactly one wins.
   */
  claimStart(jobId: string, seenUpdatedAt: number, now: number): Promise<boolean>;
  /**
   * Records where a run came from. Returns the completion noted for that run before it was recorded (see
   * noteEarlyCompletion), if any, and forgets it: the caller then completes the run as its event would have.
   */
  recordRun(ref: RunRef, now: number): Promise<RunCompletion | undefined>;
  /** The recorded run, or undefined (a run Sluice did not start, or one not recorded yet). */
  findRun(kind: JobKind, executionId: string): Promise<RunRef | undefined>;
  /**
   * Keeps the completion of a run that is not recorded, for a day: its event can beat the acquirer's recordRun (a run
   * that ends at once, or an acquirer that died between start and record). Returns false, noting nothing, when the run
   * is recorded after all: the caller looks it up again.
   */
  noteEarlyCompletion(completion: RunCompletion, now: number): Promise<boolean>;
}
