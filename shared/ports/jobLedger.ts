import type { RunCompletion } from '../domain/job';
import { JobState } from '../domain/jobState';
import type { JobKind, JobSpec } from '../kinds/registry';

/** The slot a job holds: it lives on the job's own record, so a slot always names its job and its attempt. */
export interface Lease {
  pool: string;
  /** epoch ms the slot was taken or handed over */
  since: number;
  /** taken by a job of an unlimited pool without any counter (shared/domain/unlimited.ts): giving it back moves none */
  uncounted?: boolean;
}

/** One record per job: where it is in its life, the slot it holds, and the version that fences every write. */
export interface JobRecord {
  jobId: string;
  pool: string;
  kind: JobKind;
  state: JobState;
  spec: JobSpec;
  /**
   * Counts every write to the record. Every change is conditioned on the version its writer read, so a decision taken
   * on a read applies only if nothing changed since: a stale copy's write fails instead of acting.
   */
  version: number;
  lease?: Lease;
  attempts: number;
  firstSeenAt: number;
  updatedAt: number;
  /** when the first start call was made: transient retries stop `retryFor` after it; run lookups search back to it */
  firstStartAt?: number;
  startedAt?: number;
  endedAt?: number;
  executionId?: string;
  lastError?: string;
  /** A start call was made at least once: a run may exist even if no answer said so. */
  startRequested?: boolean;
  /** In `starting`: the invocation that owns the current start attempt (its SQS message id and a random token). */
  attempt?: string;
  /** In `starting`: when another delivery may take over the start (the attempt is presumed dead, or its retry is due). */
  claimableAt?: number;
  /** Dead with a slot kept: when the run it may have started must have ended, so the slot can be given back. */
  leaseUntil?: number;
  /** Admitted to a limit with a start rate: the start time booked for it (it starts then, not before). */
  startAt?: number;
  /** Its fair-share round once it first waited (jobs with a fairness key): it keeps its place when it waits again. */
  waitRank?: number;
  /** Dead: when its copy was sent to the DLQ (a dead job without it has its copy sent when its message comes back). */
  deadLetteredAt?: number;
  /**
   * Queued again because its run ended without ever starting (RunOutcome.NotStarted): that run's id. Its next start
   * replaces it (StartOptions.replacesRun: ECS answers the job's own client token with the dead task for a day).
   */
  replacesRun?: string;
  /** Running: the last heartbeat its run sent (callback jobs): its heartbeat deadline counts from it. */
  heartbeatAt?: number;
  /** Final: the call that wrote its end (startAttempt.ts endWriter), which may meet its own write again (wroteMove). */
  endedBy?: string;
}

/** Fields a move may set (undefined ones are left as they are). */
export type RecordPatch = Partial<
  Pick<
    JobRecord,
    | 'attempts'
    | 'firstStartAt'
    | 'startedAt'
    | 'endedAt'
    | 'executionId'
    | 'lastError'
    | 'startRequested'
    | 'attempt'
    | 'claimableAt'
    | 'leaseUntil'
    | 'replacesRun'
    | 'deadLetteredAt'
    | 'waitRank'
    | 'endedBy'
  >
>;

/** A version-fenced change of one job record: applied only if the record still has `version`. */
export interface Move {
  jobId: string;
  /** the version the writer read */
  version: number;
  to: JobState;
  patch?: RecordPatch;
}

/** A job's record as `register` writes it: queued, version 1. */
export function registeredRecord(spec: JobSpec, now: number): JobRecord {
  return {
    jobId: spec.id,
    pool: spec.pool,
    kind: spec.kind,
    state: JobState.Queued,
    spec,
    version: 1,
    attempts: 0,
    firstSeenAt: now,
    updatedAt: now,
  };
}

/** The record as a successful move leaves it (the store adds one to the version; undefined patch fields stay). */
export function moved(record: JobRecord, move: Move, now: number): JobRecord {
  const patch = Object.fromEntries(Object.entries(move.patch ?? {}).filter(([, value]) => value !== undefined));
  return { ...record, ...patch, state: move.to, version: record.version + 1, updatedAt: now };
}

/**
 * Whether `record` is what `move` left, written by the caller itself: a write whose answer was lost (a connection
 * reset, or a server error after it applied) is sent again by the SDK and meets its own effect as a failed condition;
 * the local engines answer a retried transaction so, and AWS does after its ClientRequestToken's ten minutes. Only a
 * move that carries its writer's token (an end's `endedBy`) can be told from another writer's same move; any other is
 * taken for another writer's.
 */
export function wroteMove(record: JobRecord, move: Move): boolean {
  const token = move.patch?.endedBy;
  return (
    token !== undefined &&
    record.jobId === move.jobId &&
    record.endedBy === token &&
    record.state === move.to &&
    record.version === move.version + 1
  );
}

/** Whether `move`, refused, was the caller's own write with its answer lost: the job's record read now shows it (wroteMove). */
export async function wroteMoveAfterAll(ledger: Pick<JobLedger, 'get'>, move: Move): Promise<boolean> {
  if (move.patch?.endedBy === undefined) return false;
  const record = await ledger.get(move.jobId);
  return record !== undefined && wroteMove(record, move);
}

/** Where a run came from: the run's execution id leads back to the job and its pool. */
export interface RunRef {
  kind: JobKind;
  executionId: string;
  jobId: string;
  pool: string;
}

export interface JobLedger {
  /** Records a new job in `queued` (version 1); when the job is known already, returns the stored record unchanged. */
  register(spec: JobSpec, now: number): Promise<{ created: boolean; record: JobRecord }>;
  get(jobId: string): Promise<JobRecord | undefined>;
  /**
   * Applies a move that does not change the job's slot (it keeps the one it holds, or still holds none). Returns false,
   * changing nothing, if the record's version is no longer `move.version` (or the job is unknown).
   */
  move(move: Move, now: number): Promise<boolean>;
  /**
   * Deletes a dead job's record so that its id can be sent again (a redrive after its cause was fixed), provided it is
   * still at `version`, dead, holds no slot and never asked for a start (no run can exist under its id). False,
   * deleting nothing, otherwise. Not a row of the protocol table: the record leaves it, as when its TTL expires.
   */
  forget(jobId: string, version: number): Promise<boolean>;
  /**
   * Records where a run came from. Returns the completion noted for that run before it was recorded (see
   * noteEarlyCompletion), if any, each time it is called: the caller then completes the run as its event would have.
   * Not forgotten on the first call: a retried call (its first answer lost) or a later attempt (the first died before
   * completing the run) must get it too; completing a run twice is harmless, as a duplicate event.
   */
  recordRun(ref: RunRef, now: number): Promise<RunCompletion | undefined>;
  /** The recorded run, or undefined (a run Sluice did not start, or one not recorded yet). */
  findRun(kind: string, executionId: string): Promise<RunRef | undefined>;
  /**
   * The completion noted for a run before it was recorded (noteEarlyCompletion), if any. The reconciler completes a
   * run past its own deadline with it: an acquirer that recorded the run may have died before completing it.
   */
  notedCompletion(kind: string, executionId: string): Promise<RunCompletion | undefined>;
  /**
   * Keeps the completion of a run that is not recorded, for a day: its event can beat the acquirer's recordRun (a run
   * that ends at once, or an acquirer that died between start and record). Returns false, noting nothing, when the run
   * is recorded after all: the caller looks it up again.
   */
  noteEarlyCompletion(completion: RunCompletion, now: number): Promise<boolean>;
  /**
   * Keeps a run's completion on the run's key whether the run is recorded or not (notedCompletion and recordRun hand it
   * back): its releaser could not apply it (its writes kept failing: contention outlasting every try, say),
   * and a kind with no API to ask about runs would otherwise learn of its end only from its deadline. The reconciler
   * applies it on its next pass. The first kept wins (as the first applied would). Applying it twice is harmless, as a
   * duplicate event.
   */
  keepCompletion(completion: RunCompletion, now: number): Promise<void>;
  /**
   * Notes that run `executionId` of a running job is alive (protocol step `heartbeat`): heartbeatAt = now, version + 1,
   * state and slot unchanged. Not fenced by a version (the caller read nothing): applied only while the job is running
   * that run; false, changing nothing, otherwise (another run, not running yet or any more, unknown). The version moves
   * so that a decision taken on an earlier read (the reconciler ending the run for silence) fails its fence.
   */
  heartbeat(jobId: string, executionId: string, now: number): Promise<boolean>;
}
