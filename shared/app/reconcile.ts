import { isTerminal, JobState, keepsSlotForUnknownRun } from '../domain/jobState';
import { reservationIsStale, waitKey } from '../domain/waiting';
import { outcomeOf, RunStatus } from '../ports/jobStarter';
import type { JobRecord } from '../ports/jobLedger';
import { CompleteRun, CompletionResult } from './completeRun';
import { MetricName, type SluiceDeps } from './deps';
import { HandOff } from './handOff';

/** What the reconciler found wrong and put right. */
export const Drift = {
  /** the run had ended but its completion event never came */
  LostEvent: 'lost-event',
  /** the slot was held by a job that had already finished */
  LeakedSlot: 'leaked-slot',
  /** the slot was held by a job the ledger does not know */
  OrphanSlot: 'orphan-slot',
  /** a slot reserved for a waiting job whose wake-up never arrived */
  LostWakeUp: 'lost-wake-up',
  /** a job left in `starting` by an acquirer that died; its own message may be gone too */
  StalledStart: 'stalled-start',
  /** a run past its kind's maximum run time */
  Overdue: 'overdue',
  /** free slots with jobs waiting */
  IdleSlot: 'idle-slot',
} as const;
export type Drift = (typeof Drift)[keyof typeof Drift];

export interface ReconcileReport {
  pools: number;
  holdersChecked: number;
  drift: Partial<Record<Drift, number>>;
}

/**
 * The safety net, run on a schedule: completion events are best effort and functions die between calls, so every held
 * slot is checked against the ledger and, for running jobs, against the job API itself. Anything wrong is put right
 * exactly as the missing step would have done it.
 */
export class Reconciler {
  private readonly handOff: HandOff;
  private readonly completeRun: CompleteRun;

  constructor(private readonly deps: SluiceDeps) {
    this.handOff = new HandOff(deps);
    this.completeRun = new CompleteRun(deps);
  }

  async run(): Promise<ReconcileReport> {
    const report: ReconcileReport = { pools: 0, holdersChecked: 0, drift: {} };
    const note = (drift: Drift, pool: string, details: object) => {
      report.drift[drift] = (report.drift[drift] ?? 0) + 1;
      this.deps.metrics.count(MetricName.ReconciledDrift, 1, pool);
      this.deps.log.warn(`reconciler corrected drift: ${drift}`, { pool, drift, ...details });
    };
    for (const pool of await this.deps.leases.listPools()) {
      report.pools++;
      const snapshot = await this.deps.leases.getPool(pool);
      if (!snapshot) continue;
      for (const [jobId, holder] of Object.entries(snapshot.holders)) {
        report.holdersChecked++;
        try {
          const drift = await this.checkHolder(pool, jobId, holder.since);
          if (drift) note(drift, pool, { jobId });
        } catch (error) {
          this.deps.log.error('reconciler could not check a slot', { pool, jobId, error: String(error) });
        }
      }
      const admitted = await this.handOff.fill(pool);
      if (admitted > 0) note(Drift.IdleSlot, pool, { admitted });
    }
    return report;
  }

  private async checkHolder(pool: string, jobId: string, since: number): Promise<Drift | undefined> {
    const { ledger, clock, settings } = this.deps;
    const now = clock.now();
    const record = await ledger.get(jobId);
    if (!record) {
      // A slot is taken before the ledger moves on; give a fresh one time to be explained.
      if (!reservationIsStale(since, now, settings.reservationGraceMs)) return undefined;
      return (await this.handOff.releaseAndHandOff(pool, jobId)) ? Drift.OrphanSlot : undefined;
    }
    if (isTerminal(record.state)) {
      // A job given up after a start whose outcome is unknown keeps its slot as long as that run could last.
      if (keepsSlotForUnknownRun(record, now, settings.maxRunMs[record.kind])) return undefined;
      if (!(await this.handOff.releaseAndHandOff(pool, jobId))) return undefined;
      // Freed at once either way; but a job that ended a moment ago usually has its releaser at work right now: that
      // is a race this run won, not a leak, and must not show as drift.
      const endedAt = record.endedAt ?? record.updatedAt;
      return now - endedAt > settings.reservationGraceMs ? Drift.LeakedSlot : undefined;
    }
    if (record.state === JobState.Running && record.executionId) return this.checkRun(record, now);
    if (
      (record.state === JobState.Queued || record.state === JobState.Waiting) &&
      reservationIsStale(since, now, settings.reservationGraceMs)
    ) {
      return this.resendReservation(record);
    }
    if (record.state === JobState.Starting && now - record.updatedAt > settings.startGraceMs) {
      // Its message comes back after the visibility timeout, unless repeated crashes sent it to the DLQ: send it
      // again. Two copies are harmless: the acquirer's claim lets one resume, and the start is idempotent per job.
      await this.deps.queue.send(JSON.stringify(record.spec));
      return Drift.StalledStart;
    }
    return undefined;
  }

  private async checkRun(record: JobRecord, now: number): Promise<Drift | undefined> {
    const executionId = record.executionId!;
    const starter = this.deps.starters[record.kind];
    const status = await starter.status(record.spec, executionId);
    const outcome = outcomeOf(status);
    // The run is the job's by its own record: completed even if its run reference was never written.
    const run = { kind: record.kind, executionId, jobId: record.jobId, pool: record.pool };
    if (outcome) {
      const result = await this.completeRun.complete(
        { kind: record.kind, executionId, outcome, name: record.jobId, detail: 'found ended by the reconciler' },
        run,
      );
      return result === CompletionResult.Released ? Drift.LostEvent : undefined;
    }
    const maxRunMs = this.deps.settings.maxRunMs[record.kind];
    if (record.startedAt !== undefined && now - record.startedAt > maxRunMs) {
      if (this.deps.settings.stopOverdueRuns && status === RunStatus.InProgress) {
        await starter
          .stop(record.spec, executionId)
          .catch((error: unknown) =>
            this.deps.log.error('could not stop an overdue run', { jobId: record.jobId, executionId, error: String(error) }),
          );
      }
      const result = await this.completeRun.complete(
        {
          kind: record.kind,
          executionId,
          outcome: 'failed',
          name: record.jobId,
          detail: `exceeded the maximum run time of ${Math.round(maxRunMs / 1000)} s`,
        },
        run,
      );
      return result === CompletionResult.Released ? Drift.Overdue : undefined;
    }
    return undefined;
  }

  /** A slot was reserved for this job but the message that should start it never came: send it again. */
  private async resendReservation(record: JobRecord): Promise<Drift> {
    const waiter = await this.deps.leases.getWaiter(record.pool, waitKey(record.firstSeenAt, record.jobId));
    if (waiter) await this.handOff.dispatch(waiter);
    else await this.deps.queue.send(JSON.stringify(record.spec));
    return Drift.LostWakeUp;
  }
}
