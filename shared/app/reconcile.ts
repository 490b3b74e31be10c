import { keepsSlot } from '../domain/decisions';
import { demandOf } from '../domain/job';
import { encodeJobBody } from '../domain/jobBody';
import { JobState } from '../domain/jobState';
import { kindOf } from '../kinds/registry';
import { PROTOCOL } from '../domain/protocol';
import { reservationIsStale } from '../domain/waiting';
import type { JobRecord } from '../ports/jobLedger';
import { outcomeOf, RunStatus } from '../ports/jobStarter';
import { CompleteRun, CompletionResult } from './completeRun';
import { MetricName, type SluiceDeps } from './deps';
import { overLimitGate } from './gates';
import { HandOff } from './handOff';
import { inParallel } from './inParallel';
import { jobEnded } from './jobSetEnds';
import { JobSetRunner } from './jobSets';
import { revokeReservation } from './revoke';
import { waiterFor } from './waiters';

/** What the reconciler found wrong and put right. */
export const Drift = {
  /** the run had ended but its completion event never came */
  LostEvent: 'lost-event',
  /** a slot kept for a run of unknown outcome was given back (that run ended, or must have) */
  KeptSlotFreed: 'kept-slot-freed',
  /** a slot reserved for a waiting job whose wake-up never arrived */
  LostWakeUp: 'lost-wake-up',
  /** a reservation taken back because the pool is over a lowered limit */
  Revoked: 'revoked',
  /** a job left in `starting` by an acquirer that died; its own message may be gone too */
  StalledStart: 'stalled-start',
  /** a run past its kind's maximum run time */
  Overdue: 'overdue',
  /** a run past its own deadline (a callback job that neither reported nor sent a heartbeat in time) */
  DeadlinePassed: 'deadline-passed',
  /** free slots with jobs waiting */
  IdleSlot: 'idle-slot',
} as const;
export type Drift = (typeof Drift)[keyof typeof Drift];

export interface ReconcileReport {
  pools: number;
  holdersChecked: number;
  /** pools whose holders were not all checked before the run's time budget ran out (continued next run) */
  unfinished: number;
  drift: Partial<Record<Drift, number>>;
}

/** Holders read per page and pools' pages taken in turn, so one large pool cannot starve the others. */
export const HOLDERS_PER_PAGE = 50;

/**
 * The safety net, run on a schedule: completion events are best effort and functions die between calls, so every held
 * slot is checked against its job's record and, for running jobs, against the job API itself. Anything wrong is put
 * right exactly as the missing step would have done it, with the same version-fenced writes (docs/protocol.md).
 * Pools are visited a page of holders at a time, in turn, each page checked in parallel (at most `checkConcurrency`
 * at once), until every pool is done or the time budget is spent; an unfinished pool continues next run where it
 * stopped (this instance keeps its place; a cold start begins again from the first holder).
 */
export class Reconciler {
  private readonly handOff: HandOff;
  private readonly completeRun: CompleteRun;
  private readonly resumeAfter = new Map<string, string>();

  constructor(private readonly deps: SluiceDeps) {
    this.handOff = new HandOff(deps);
    this.completeRun = new CompleteRun(deps);
  }

  async run(): Promise<ReconcileReport> {
    const { leases, clock, settings } = this.deps;
    const report: ReconcileReport = { pools: 0, holdersChecked: 0, unfinished: 0, drift: {} };
    const note = (drift: Drift, pool: string, details: object) => {
      report.drift[drift] = (report.drift[drift] ?? 0) + 1;
      this.deps.metrics.count(MetricName.ReconciledDrift, 1, pool);
      this.deps.log.warn(`reconciler corrected drift: ${drift}`, { pool, drift, ...details });
    };
    const deadline = clock.now() + settings.reconcileBudgetMs;
    // Pools in turn: each turn checks one page of one pool.
    // Job set runs whose last count an invocation missed, or whose completion event its sender did not note.
    if (this.deps.sets) {
      await new JobSetRunner({ ...this.deps, sets: this.deps.sets }, [])
        .sweep()
        .catch((error: unknown) => this.deps.log.error('reconciler could not check job set runs', { error: String(error) }));
    }
    const turns = (await leases.listPools()).map((pool) => ({ pool, after: this.resumeAfter.get(pool), started: false }));
    report.pools = turns.length;
    while (turns.length > 0) {
      const turn = turns.shift()!;
      if (clock.now() >= deadline) {
        report.unfinished += 1 + turns.length;
        return report;
      }
      const page = await leases.holders(turn.pool, { after: turn.after, max: HOLDERS_PER_PAGE });
      await inParallel(
        page.holders.map((holder) => holder.jobId),
        settings.reconcileConcurrency,
        async (jobId) => {
          report.holdersChecked++;
          try {
            const drift = await this.checkHolder(jobId);
            if (drift) note(drift, turn.pool, { jobId });
          } catch (error) {
            this.deps.log.error('reconciler could not check a slot', { pool: turn.pool, jobId, error: String(error) });
          }
        },
      );
      if (page.next !== undefined) {
        this.resumeAfter.set(turn.pool, page.next);
        turns.push({ ...turn, after: page.next });
        continue;
      }
      this.resumeAfter.delete(turn.pool);
      const admitted = await this.handOff.fill(turn.pool);
      if (admitted > 0) note(Drift.IdleSlot, turn.pool, { admitted });
    }
    return report;
  }

  private async checkHolder(jobId: string): Promise<Drift | undefined> {
    const { ledger, clock, settings } = this.deps;
    const record = await ledger.get(jobId);
    if (!record?.lease) return undefined; // the index lags: freed since
    const now = clock.now();
    switch (record.state) {
      case JobState.Reserved:
        if (!reservationIsStale(record.lease.since, now, settings.reservationGraceMs)) return undefined;
        return this.staleReservation(record);
      case JobState.Starting:
        if (record.claimableAt === undefined || now <= record.claimableAt) return undefined;
        // Its message comes back after the visibility timeout, unless repeated crashes sent it to the DLQ: send it
        // again. Two copies are harmless: one resumes (version-fenced), the start is idempotent per job.
        await this.deps.queue.send(encodeJobBody(record.spec));
        return Drift.StalledStart;
      case JobState.Running:
        return this.checkRun(record, now);
      case JobState.Dead:
        return this.checkKeptSlot(record, now);
      default:
        return undefined;
    }
  }

  /** A reservation whose wake-up never came: taken back if one of its limits is over a lowered limit, else sent again. */
  private async staleReservation(record: JobRecord): Promise<Drift | undefined> {
    const overGate = await overLimitGate(this.deps.leases, demandOf(record.spec));
    if (overGate !== undefined) return (await revokeReservation(this.deps, record, overGate)) ? Drift.Revoked : undefined;
    // Its waiter item went with the reservation: the wake-up is the job's own spec.
    await this.handOff.dispatch(waiterFor(record));
    return Drift.LostWakeUp;
  }

  private async checkRun(record: JobRecord, now: number): Promise<Drift | undefined> {
    const executionId = record.executionId!;
    const starter = this.deps.starters[record.kind];
    // A status call that fails (throttled, the flow or job deleted) must not skip the maximum-run-time fallback.
    let status: RunStatus | undefined;
    try {
      status = await starter.status(record.spec, executionId, { requestedSince: record.firstStartAt ?? record.firstSeenAt });
    } catch (error) {
      this.deps.log.error('reconciler could not ask the job API about a run', {
        jobId: record.jobId,
        pool: record.pool,
        kind: record.kind,
        executionId,
        error: String(error),
      });
    }
    const outcome = status && outcomeOf(status);
    // The run is the job's by its own record: completed even if its run reference was never written.
    const run = { kind: record.kind, executionId, jobId: record.jobId, pool: record.pool };
    if (outcome) {
      const result = await this.completeRun.complete(
        { kind: record.kind, executionId, outcome, name: record.jobId, detail: 'found ended by the reconciler' },
        run,
      );
      return result === CompletionResult.Released ? Drift.LostEvent : undefined;
    }
    if (record.startedAt === undefined) return undefined;
    const deadline = kindOf(record.kind).runDeadline?.(record.spec, { startedAt: record.startedAt, heartbeatAt: record.heartbeatAt });
    if (deadline && now > deadline.at) return this.endPastDeadline(record, deadline.reason, now);
    const maxRunMs = this.deps.settings.maxRunMs[record.kind];
    if (now - record.startedAt <= maxRunMs) return undefined;
    await this.stopOverdue(record);
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

  /**
   * A run past its own deadline (a callback job silent too long) ends as failed, fenced by the version this check read:
   * a heartbeat or a report since then moved the version, the write fails, and the next run looks again.
   */
  private async endPastDeadline(record: JobRecord, reason: string, now: number): Promise<Drift | undefined> {
    await this.stopOverdue(record);
    const move = {
      jobId: record.jobId,
      version: record.version,
      to: JobState.Failed,
      patch: { executionId: record.executionId, endedAt: now, lastError: reason },
    };
    if (!(await this.handOff.release(demandOf(record.spec), move))) return undefined;
    await jobEnded(this.deps, record.spec);
    this.deps.log.info('run ended by its deadline, slot released', {
      jobId: record.jobId,
      pool: record.pool,
      kind: record.kind,
      executionId: record.executionId,
      reason,
    });
    return Drift.DeadlinePassed;
  }

  /** Stops a run the reconciler ends for time (when stopOverdueRuns): a failure to stop is logged, the slot freed all the same. */
  private async stopOverdue(record: JobRecord): Promise<void> {
    if (!this.deps.settings.stopOverdueRuns) return;
    await this.deps.starters[record.kind].stop(record.spec, record.executionId!).catch((error: unknown) =>
      this.deps.log.error('could not stop an overdue run', {
        jobId: record.jobId,
        pool: record.pool,
        kind: record.kind,
        executionId: record.executionId,
        error: String(error),
      }),
    );
  }

  /** A dead job keeping its slot for a run of unknown outcome: given back once that run ended or must have. */
  private async checkKeptSlot(record: JobRecord, now: number): Promise<Drift | undefined> {
    if (keepsSlot(record, now) && record.executionId) {
      const status = await this.deps.starters[record.kind]
        .status(record.spec, record.executionId, { requestedSince: record.firstStartAt })
        .catch(() => undefined);
      if (!status || !outcomeOf(status)) return undefined;
    } else if (keepsSlot(record, now)) {
      return undefined;
    }
    const move = { jobId: record.jobId, version: record.version, to: PROTOCOL.giveBack.to };
    return (await this.handOff.release(demandOf(record.spec), move)) ? Drift.KeptSlotFreed : undefined;
  }
}
