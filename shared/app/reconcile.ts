import { Answer, Because, onKeptSlot, onRunCheck, type Overdue, type RunAnswer } from '../domain/decisions';
import { demandOf } from '../domain/job';
import { encodeJobBody } from '../domain/jobBody';
import { JobState } from '../domain/jobState';
import { kindOf } from '../kinds/registry';
import { PROTOCOL } from '../domain/protocol';
import {
  adoptionDone,
  type AdoptionPass,
  adoptsUncounted,
  heldDemand,
  poolOfHolderKey,
  UNCOUNTED_HOLDER_SHARDS,
  uncountedHolderKeys,
} from '../domain/unlimited';
import { reservationIsStale } from '../domain/waiting';
import { type JobRecord, moved } from '../ports/jobLedger';
import { outcomeOf, RunStatus } from '../ports/jobStarter';
import { AdoptOutcome } from '../ports/leaseStore';
import { UnknownPoolError } from '../errors';
import { CompleteRun, CompletionResult } from './completeRun';
import { MetricName, type SluiceDeps } from './deps';
import { createConfiguredGate, followConfiguration, overLimitGate } from './gates';
import { HandOff } from './handOff';
import { inParallel } from './inParallel';
import { jobEnded } from './jobSetEnds';
import { endWriter } from '../domain/startAttempt';
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
  /**
   * a run the job API no longer knows (its flow, job or task deleted, or the run dropped from the API's history), recorded
   * long enough ago that the answer is not the API's eventual consistency: ended as failed
   */
  RunGone: 'run-gone',
  /** a run past its own deadline (a callback job that neither reported nor sent a heartbeat in time) */
  DeadlinePassed: 'deadline-passed',
  /** free slots with jobs waiting */
  IdleSlot: 'idle-slot',
  /** a slot taken while its pool was unlimited, counted now on the limit the configuration gives the pool again */
  Adopted: 'adopted',
} as const;
export type Drift = (typeof Drift)[keyof typeof Drift];

export interface ReconcileReport {
  pools: number;
  holdersChecked: number;
  /** pools whose holders were not all checked before the run's time budget ran out (continued next run) */
  unfinished: number;
  drift: Partial<Record<Drift, number>>;
  /**
   * Runs past their kind's maximum run time that go on (or could not be asked about) and keep their slots: not drift
   * put right, but a limit Sluice cannot enforce alone (present when there are any; see `overdue`).
   */
  overdue?: number;
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
    // The unlimited pools too: their uncounted slots are listed under the pool's shards (no counter lists them), and
    // checked as any. Those of every pool ever unlimited (marked by its first uncounted take), not only the pools
    // configured unlimited now: a pool limited again keeps its uncounted slots until their jobs end.
    // Read failed: the pools configured unlimited now, this run (the marks are read again by the next).
    const marked = await leases.uncountedPools().catch((error: unknown) => {
      this.deps.log.error('reconciler could not read the pools ever unlimited', { error: String(error) });
      return [] as string[];
    });
    // A pool unlimited now whose slots were taken before marks were written: marked here, so it is still visited once
    // it is limited again.
    for (const pool of settings.unlimitedPools ?? [])
      if (!marked.includes(pool))
        await leases
          .markUncounted(pool)
          .catch((error: unknown) => this.deps.log.error('reconciler could not mark an unlimited pool', { pool, error: String(error) }));
    const uncountedPools = [...new Set([...marked, ...(settings.unlimitedPools ?? [])])];
    const listed = await leases.listPools();
    // An unlimited pool's counter is created (never full, written only by its rated or keyed jobs) so that the CLI,
    // which does not know the stage's configuration, lists the pool and its holders (shared/inspect/pools.ts).
    for (const pool of settings.unlimitedPools ?? [])
      if (!listed.includes(pool))
        await createConfiguredGate(this.deps, pool).catch((error: unknown) =>
          this.deps.log.error('reconciler could not create an unlimited pool', { pool, error: String(error) }),
        );
    // A pool switched between unlimited and limited: its counter follows before the pool's fill, which lets in the
    // jobs the old limit held back. A pool limited again adopts: its counter admits nothing until the slots its jobs
    // took while it was unlimited are counted on it (below); its shards are visited even if no mark names it.
    // The marked pools too: a counter whose registry item was never written (its creator died between the two puts).
    const { adopting } = await followConfiguration(this.deps, [...new Set([...listed, ...uncountedPools])]);
    const shards = new Set([...uncountedPools, ...adopting].flatMap(uncountedHolderKeys));
    // Each pool whose uncounted slots are counted now (configured limited): what this run saw of its shards.
    const passes = new Map<string, AdoptionPass>();
    const turns = [...new Set([...listed, ...shards])].map((pool) => ({ pool, after: this.resumeAfter.get(pool) }));
    const whole = new Set(turns.filter((turn) => turn.after === undefined).map((turn) => turn.pool));
    report.pools = new Set([...listed, ...uncountedPools, ...adopting]).size;
    while (turns.length > 0) {
      const turn = turns.shift()!;
      if (clock.now() >= deadline) {
        report.unfinished += 1 + turns.length;
        return report;
      }
      const pool = poolOfHolderKey(turn.pool);
      const adopts = shards.has(turn.pool) && (adoptsUncounted(pool, settings) || adopting.includes(pool));
      const pass = adopts ? (passes.get(pool) ?? passes.set(pool, { wholeShards: 0, failed: 0 }).get(pool)!) : undefined;
      // The adoption's reads begin with the first page of the first shard this run reads whole (adoptionDone).
      if (pass && whole.has(turn.pool) && turn.after === undefined) pass.readsBeganAt ??= clock.now();
      const page = await leases.holders(turn.pool, { after: turn.after, max: HOLDERS_PER_PAGE });
      await inParallel(
        page.holders.map((holder) => holder.jobId),
        settings.reconcileConcurrency,
        async (jobId) => {
          report.holdersChecked++;
          try {
            // A slot taken while its pool was unlimited: counted on the pool's limit first, then checked as any.
            if (pass && (await this.adopt(jobId, pool, pass))) note(Drift.Adopted, pool, { jobId });
            const drift = await this.checkHolder(jobId, report);
            if (drift) note(drift, pool, { jobId });
          } catch (error) {
            this.deps.log.error('reconciler could not check a slot', { pool, jobId, error: String(error) });
          }
        },
      );
      if (page.next !== undefined) {
        this.resumeAfter.set(turn.pool, page.next);
        turns.push({ ...turn, after: page.next });
        continue;
      }
      this.resumeAfter.delete(turn.pool);
      // (An adopting pool admits nothing: it is filled once it has counted its uncounted slots, below.)
      if (!shards.has(turn.pool)) {
        if (!adopting.includes(turn.pool)) {
          const admitted = await this.handOff.fill(turn.pool);
          if (admitted > 0) note(Drift.IdleSlot, turn.pool, { admitted });
        }
        continue;
      }
      // A shard has no counter and no waiting list: nothing to fill. Its pool's last shard read whole may end adopting.
      if (pass && whole.has(turn.pool)) {
        pass.wholeShards++;
        // Read once its last shard is done, and only for a counter seen adopting (a pool marked adopting since is the
        // next run's to end).
        if (pass.wholeShards === UNCOUNTED_HOLDER_SHARDS && adopting.includes(pool)) await this.endAdopting(pool, pass, note);
      }
    }
    return report;
  }

  /**
   * Counts an uncounted slot of a pool the configuration gives a limit again on the pool's counter (`adopt`): true if
   * this call counted it. A record no longer holding one (given back, or counted meanwhile) is nothing to do; a failure
   * is counted in the pass, so the pool keeps adopting (admitting nothing) until a run counts every slot it sees.
   */
  private async adopt(jobId: string, pool: string, pass: AdoptionPass): Promise<boolean> {
    try {
      const record = await this.deps.ledger.get(jobId);
      if (!record?.lease?.uncounted || record.lease.pool !== pool) return false;
      const units = demandOf(record.spec).units;
      let outcome = await this.deps.leases.adopt(pool, jobId, units);
      // No counter yet (the pool took only uncounted slots, and no reconcile created it): created from configuration
      // (adopting, the pool being marked or adopting), then counted.
      if (outcome === AdoptOutcome.NoPool && (await createConfiguredGate(this.deps, pool)))
        outcome = await this.deps.leases.adopt(pool, jobId, units);
      if (outcome === AdoptOutcome.NoPool) throw new UnknownPoolError(`pool ${pool} has no counter to count the slot on`);
      return outcome === AdoptOutcome.Adopted;
    } catch (error) {
      pass.failed++;
      throw error;
    }
  }

  /**
   * Once a run has read every shard of an adopting pool whole and counted every slot it saw, its reads begun once the
   * adoption had settled (adoptionDone: no invocation on the configuration before the deploy is left), the pool's
   * counter admits again, and its waiting jobs are let in up to its limit (none while the counted slots hold it over).
   */
  private async endAdopting(pool: string, pass: AdoptionPass, note: (drift: Drift, pool: string, details: object) => void): Promise<void> {
    try {
      const counter = await this.deps.leases.getPool(pool);
      if (
        !counter ||
        !adoptionDone(counter, pass, this.deps.settings.adoptSettleMs) ||
        !(await this.deps.leases.endAdopting(pool, counter.adoptingSince))
      )
        return;
      this.deps.log.info('pool adopted the slots taken while it was unlimited: it admits again', {
        pool,
        limit: counter.limit,
        inUse: counter.inUse,
      });
      const admitted = await this.handOff.fill(pool);
      if (admitted > 0) note(Drift.IdleSlot, pool, { admitted });
    } catch (error) {
      this.deps.log.error('reconciler could not end the adopting of a pool', { pool, error: String(error) });
    }
  }

  private async checkHolder(jobId: string, report: ReconcileReport): Promise<Drift | undefined> {
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
        return this.checkRun(record, now, report);
      case JobState.Dead:
        return this.checkKeptSlot(record, now, report);
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

  private async checkRun(record: JobRecord, now: number, report: ReconcileReport): Promise<Drift | undefined> {
    const executionId = record.executionId!;
    const kind = kindOf(record.kind);
    if (kind.runDeadline) {
      // A kind Sluice judges (no API to ask about its runs): a report kept on the run's key (its releaser could not
      // apply it, or it came before the run was recorded and the acquirer died before applying it) ends the run as it
      // says, not the deadline.
      const noted = await this.completeNoted(record, executionId);
      if (noted !== undefined) return noted === CompletionResult.Released ? Drift.LostEvent : undefined;
    }
    const answer = await this.ask(record, executionId);
    const maxRunMs = this.deps.settings.maxRunMs[record.kind];
    // A running record has its start time (`record` writes it); without one, its last write is the safe stand-in.
    const startedAt = record.startedAt ?? record.updatedAt;
    const judged = kind.runDeadline
      ? { deadline: kind.runDeadline(record.spec, { startedAt, heartbeatAt: record.heartbeatAt }) }
      : undefined;
    const decision = onRunCheck({ answer, now, startedAt, maxRunMs, ...(judged && { judged }) });
    if ('keep' in decision) {
      if (decision.overdue) await this.overdue(record, decision.overdue, report);
      return undefined;
    }
    // The run is the job's by its own record: completed even if its run reference was never written.
    const run = { kind: record.kind, executionId, jobId: record.jobId, pool: record.pool };
    if (decision.why === Because.Deadline) return this.endPastDeadline(record, decision.reason, now);
    const detail = decision.why === Because.Gone ? GONE_DETAIL : 'found ended by the reconciler';
    const result = await this.completeRun.complete(
      { kind: record.kind, executionId, outcome: decision.outcome, name: record.jobId, detail },
      run,
    );
    if (result !== CompletionResult.Released) return undefined;
    return decision.why === Because.Gone ? Drift.RunGone : Drift.LostEvent;
  }

  /**
   * The job API's answer about a run. A call that fails (throttled, a 5xx, a timeout, any error) is no answer: it never
   * frees a slot, and the next reconcile asks again.
   */
  private async ask(record: JobRecord, executionId: string): Promise<RunAnswer> {
    let status: RunStatus;
    try {
      status = await this.deps.starters[record.kind].status(record.spec, executionId, {
        requestedSince: record.firstStartAt ?? record.firstSeenAt,
      });
    } catch (error) {
      this.deps.log.error('reconciler could not ask the job API about a run', {
        jobId: record.jobId,
        pool: record.pool,
        kind: record.kind,
        executionId,
        error: String(error),
      });
      return Answer.Unanswered;
    }
    const outcome = outcomeOf(status);
    if (outcome) return { ended: outcome };
    return status === RunStatus.Gone ? Answer.Gone : Answer.Going;
  }

  /**
   * A run past its kind's maximum run time that goes on (or cannot be asked about) keeps its slot: freeing it would let
   * one run more than the limit start while it goes on. Each reconcile counts it (metric OverdueRuns, the
   * `run-past-maximum` alarm) and logs a line naming it. With stopOverdueRuns it is asked to stop, again each reconcile
   * until the API reports it ended (a stop that failed or was lost is tried again; stopping a stopping run changes
   * nothing); its slot then comes back as any ended run's, by its event or the next reconcile.
   */
  private async overdue(record: JobRecord, overdue: Overdue, report: ReconcileReport): Promise<void> {
    const { settings, metrics, log } = this.deps;
    report.overdue = (report.overdue ?? 0) + 1;
    metrics.count(MetricName.OverdueRuns, 1, record.pool);
    const stop = settings.stopOverdueRuns ? await this.stop(record) : undefined;
    log.error('run past its maximum run time keeps its slot', {
      jobId: record.jobId,
      pool: record.pool,
      kind: record.kind,
      target: targetOf(record),
      executionId: record.executionId,
      state: record.state,
      ranSeconds: Math.round(overdue.ranMs / 1000),
      maxRunSeconds: Math.round(overdue.maxRunMs / 1000),
      stop: stop ?? 'not asked (stopOverdueRuns is off)',
    });
  }

  /**
   * A run past its own deadline (a callback job silent too long) ends as failed, fenced by the version this check read:
   * a heartbeat or a report since then moved the version, the write fails, and the next run looks again.
   */
  private async endPastDeadline(record: JobRecord, reason: string, now: number): Promise<Drift | undefined> {
    // Sluice is the judge of such a run: it is over now, whatever its target does; with stopOverdueRuns its target is
    // told so (a failure to tell it is logged, the slot freed all the same).
    const stop = this.deps.settings.stopOverdueRuns ? await this.stop(record) : undefined;
    if (stop !== undefined && stop !== 'asked')
      this.deps.log.error('could not stop a run past its deadline', {
        jobId: record.jobId,
        pool: record.pool,
        kind: record.kind,
        executionId: record.executionId,
        error: stop,
      });
    const move = {
      jobId: record.jobId,
      version: record.version,
      to: JobState.Failed,
      patch: { executionId: record.executionId, endedAt: now, endedBy: endWriter(this.deps.random), lastError: reason },
    };
    // The job counts itself as soon as its end is written, before the slot's next job is let in (as the releaser's).
    const ended = () => jobEnded(this.deps, moved(record, move, now));
    if (!(await this.handOff.release(heldDemand(record.spec, record.lease), move, undefined, ended))) return undefined;
    this.deps.log.info('run ended by its deadline, slot released', {
      jobId: record.jobId,
      pool: record.pool,
      kind: record.kind,
      executionId: record.executionId,
      reason,
    });
    return Drift.DeadlinePassed;
  }

  /** Asks the job API to stop a run: 'asked', or why it could not be (logged by the caller). */
  private async stop(record: JobRecord): Promise<string> {
    try {
      await this.deps.starters[record.kind].stop(record.spec, record.executionId!);
      return 'asked';
    } catch (error) {
      return `could not be asked: ${String(error)}`;
    }
  }

  /**
   * Completes the job's run as its report noted on the run's key says (a report that came before the run was recorded,
   * handed back to an invocation that died before applying it; or kept by a releaser that could not apply it).
   * Undefined when none was noted.
   */
  private async completeNoted(record: JobRecord, executionId: string): Promise<CompletionResult | undefined> {
    const noted = await this.deps.ledger.notedCompletion(record.kind, executionId);
    if (!noted) return undefined;
    return this.completeRun.complete(noted, { kind: record.kind, executionId, jobId: record.jobId, pool: record.pool });
  }

  /**
   * A dead job keeping its slot for a run of unknown outcome (docs/protocol.md, giveUpKeep): given back once that run
   * ended, or the API no longer knows it, or (no run id known, or a kind Sluice judges) leaseUntil passed.
   */
  private async checkKeptSlot(record: JobRecord, now: number, report: ReconcileReport): Promise<Drift | undefined> {
    const judged = kindOf(record.kind).runDeadline !== undefined;
    if (judged && record.executionId !== undefined) {
      // A kind with no status API (a callback job): its report, noted before its run was recorded and handed back to an
      // invocation that died before applying it, gives the slot back now rather than at leaseUntil.
      const noted = await this.completeNoted(record, record.executionId);
      if (noted !== undefined) return noted === CompletionResult.Released ? Drift.KeptSlotFreed : undefined;
    }
    const asked = record.executionId !== undefined && !judged;
    const answer = asked ? await this.ask(record, record.executionId!) : undefined;
    const decision = onKeptSlot({
      now,
      leaseUntil: record.leaseUntil,
      maxRunMs: this.deps.settings.maxRunMs[record.kind],
      ...(answer !== undefined && { answer }),
      ...(record.startedAt !== undefined && { startedAt: record.startedAt }),
    });
    if ('keep' in decision) {
      if (decision.overdue) await this.overdue(record, decision.overdue, report);
      return undefined;
    }
    const move = { jobId: record.jobId, version: record.version, to: PROTOCOL.giveBack.to };
    if (!(await this.handOff.release(heldDemand(record.spec, record.lease), move))) return undefined;
    this.deps.log.info('kept slot given back', { jobId: record.jobId, pool: record.pool, kind: record.kind, why: decision.why });
    return Drift.KeptSlotFreed;
  }
}

/** What the job starts, for the overdue line: a kind that cannot name it (a record of an older spec) is not a reason to skip the line. */
function targetOf(record: JobRecord): string {
  try {
    return kindOf(record.kind).target(record.spec);
  } catch {
    return '(unknown)';
  }
}

/** A run's detail when the reconciler ends it because the job API no longer knows it. */
export const GONE_DETAIL =
  'the job API no longer knows the run (its flow, job or task deleted, or the run dropped from its history): ended as failed';
