import { demandOf } from '../domain/job';
import { gatesOf } from '../domain/limits';
import { isTerminal, JobState } from '../domain/jobState';
import { PROTOCOL } from '../domain/protocol';
import { type JobLedger, type JobRecord, type Move, moved, wroteMove } from '../ports/jobLedger';
import { endWriter } from '../domain/startAttempt';
import type { JobStarters } from '../ports/jobStarter';
import type { LeaseStore } from '../ports/leaseStore';
import type { ScheduleStore, WaiterRef } from '../ports/scheduleStore';
import type { Clock } from '../ports/clock';
import { waiterFor } from './waiters';

export const CancelOutcome = {
  /** it never starts: cancelled (protocol step cancel) */
  Cancelled: 'cancelled',
  /** running: its run was asked to stop (--stop); the run's completion ends the job, as any run's does */
  StopRequested: 'stop-requested',
  /** running, and --stop was not given: nothing done */
  Running: 'running',
  /** reserved or starting: its start is under way; nothing done (cancel it with --stop once it runs) */
  Starting: 'starting',
  /** already ended (succeeded, failed, dead, cancelled) */
  Finished: 'finished',
  NotFound: 'not-found',
} as const;
export type CancelOutcome = (typeof CancelOutcome)[keyof typeof CancelOutcome];

export interface CancelResult {
  outcome: CancelOutcome;
  /** the job's state when the outcome was decided */
  state?: JobState;
  executionId?: string;
}

export interface CancelDeps {
  ledger: JobLedger;
  leases: Pick<LeaseStore, 'getWaiter'>;
  schedule: Pick<ScheduleStore, 'cancel'>;
  starters: JobStarters;
  clock: Clock;
  /** for the token of a cancel's write (endedBy), by which a write whose answer was lost is known as its own */
  random: () => number;
  /** Told of each job cancelled, with its record as cancelled (its end is announced on the bus: jobSetEnds.ts). */
  onCancelled?(ended: JobRecord): Promise<void>;
}

/** Reads lost to concurrent writers before giving up (each means the job moved on: decide again). */
const MAX_ROUNDS = 10;

/**
 * `sluice cancel JOB_ID [--stop]`. A job that holds no slot (scheduled, queued or waiting) is moved to cancelled, fenced
 * by the version read (a waiting job's waiter item deleted in the same transaction), so it never starts: its delayed
 * message, a loader's copy or a hand-off meets a cancelled job and drops it. A running job is stopped through its
 * kind's stop call, only when asked (`stop`): its run's completion then ends it (succeeded or failed, as the job API
 * says). A job whose start is under way (reserved, starting) is left alone: it holds a slot and a start call may be in
 * flight; cancel it with --stop once it runs.
 */
export class CancelJob {
  constructor(private readonly deps: CancelDeps) {}

  async cancel(jobId: string, options: { stop?: boolean } = {}): Promise<CancelResult> {
    let tried: { move: Move; from: JobRecord } | undefined;
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const record = await this.deps.ledger.get(jobId);
      if (!record) return { outcome: CancelOutcome.NotFound };
      const state = record.state;
      // Our last cancel, applied with its answer lost (the SDK's retry met its own effect): cancelled by this call.
      if (tried && wroteMove(record, tried.move)) return this.cancelled(tried.from, record);
      if (isTerminal(state)) return { outcome: CancelOutcome.Finished, state };
      if (state === JobState.Running) {
        if (!options.stop) return { outcome: CancelOutcome.Running, state, executionId: record.executionId };
        await this.deps.starters[record.kind].stop(record.spec, record.executionId!);
        return { outcome: CancelOutcome.StopRequested, state, executionId: record.executionId };
      }
      if (state === JobState.Reserved || state === JobState.Starting) return { outcome: CancelOutcome.Starting, state };
      const waiter = state === JobState.Waiting ? await this.waiterOf(record) : undefined;
      const now = this.deps.clock.now();
      const move = {
        jobId,
        version: record.version,
        to: PROTOCOL.cancel.to,
        patch: { endedAt: now, endedBy: endWriter(this.deps.random) },
      };
      if (await this.deps.schedule.cancel(move, now, waiter)) return this.cancelled(record, moved(record, move, now));
      tried = { move, from: record };
    }
    throw new Error(`job ${jobId} kept moving while it was being cancelled: try again`);
  }

  private async cancelled(from: JobRecord, ended: JobRecord): Promise<CancelResult> {
    await this.deps.onCancelled?.(ended);
    return { outcome: CancelOutcome.Cancelled, state: from.state };
  }

  /**
   * The waiter item of a waiting job: on the list of its pool or of one of its keyed limits (whichever held it back).
   * Not found (moved between lists meanwhile, or being let in): the job is cancelled without it, and the stale item is
   * dropped by the hand-off that meets it (the job is no longer admittable).
   */
  private async waiterOf(record: JobRecord): Promise<WaiterRef | undefined> {
    const { waitKey } = waiterFor(record);
    for (const gate of gatesOf(demandOf(record.spec))) {
      if (await this.deps.leases.getWaiter(gate, waitKey)) return { gate, waitKey };
    }
    return undefined;
  }
}
