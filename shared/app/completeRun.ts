import { onCompletion } from '../domain/decisions';
import { type RunCompletion, RunOutcome } from '../domain/job';
import { JobState } from '../domain/jobState';
import { PROTOCOL } from '../domain/protocol';
import { heldDemand, isUnlimitedPool } from '../domain/unlimited';
import { type JobRecord, moved, type RunRef } from '../ports/jobLedger';
import { retryDelaySeconds, withinRetryBudget } from '../domain/backoff';
import { encodeJobBody } from '../domain/jobBody';
import { MetricName, type SluiceDeps } from './deps';
import { HandOff, type HandOffOptions, type Prefetched, type StartHandedOff } from './handOff';
import { jobEnded } from './jobSetEnds';
import { endWriter } from '../domain/startAttempt';

export const CompletionResult = {
  Released: 'released',
  /** the run was already finished and its slot freed: a duplicate or late event */
  AlreadyDone: 'already-done',
  /** no run recorded under that id: kept a day for its acquirer, which may not have recorded it yet */
  Noted: 'noted',
  /** the ledger has the job in another run or state */
  Ignored: 'ignored',
} as const;
export type CompletionResult = (typeof CompletionResult)[keyof typeof CompletionResult];

/** Reads and writes lost to concurrent writers before a completion gives up (each loss means another writer moved on). */
const MAX_ROUNDS = 10;

/**
 * The releaser: a run ended (its event arrived, or the reconciler found it ended). Marks the job finished and frees its
 * slot in one transaction, handing it to the next waiting job. Safe to repeat: a second completion finds the job
 * finished and changes nothing.
 */
export class CompleteRun {
  private readonly handOff: HandOff;

  /** `startHere`: the releaser starts the job its slot goes to itself (see HandOff). */
  constructor(
    private readonly deps: SluiceDeps,
    startHere?: StartHandedOff,
    handOffOptions?: HandOffOptions,
  ) {
    this.handOff = new HandOff(deps, startHere, handOffOptions);
  }

  /**
   * `known` is the run when the caller has it from the job's own record (the reconciler): then the run is completed
   * even if its run reference was never written.
   */
  async complete(completion: RunCompletion, known?: RunRef): Promise<CompletionResult> {
    const { ledger, clock, log, metrics } = this.deps;
    let run = known ?? (await ledger.findRun(completion.kind, completion.executionId));
    if (!run) {
      // Most such events are for runs Sluice did not start; a few beat the acquirer's record of the run.
      if (await ledger.noteEarlyCompletion(completion, clock.now())) {
        log.debug('completion of a run not recorded, noted for its acquirer', {
          kind: completion.kind,
          executionId: completion.executionId,
          name: completion.name,
        });
        metrics.count(MetricName.NotedCompletions);
        return CompletionResult.Noted;
      }
      run = await ledger.findRun(completion.kind, completion.executionId); // recorded just now
      if (!run) throw new Error(`run ${completion.kind} ${completion.executionId} is recorded but cannot be read`);
    }
    try {
      return await this.apply(completion, run);
    } catch (error) {
      // The end could not be written (or its hand-off failed after it): the completion is kept on the run's key, so the
      // reconciler applies it even if every retry of this event fails too (a kind with no API to ask would otherwise
      // end at its deadline, failed). Then the event is retried as any failure.
      await ledger.keepCompletion(completion, clock.now()).catch((kept: unknown) =>
        log.error('could not keep a completion that could not be applied', {
          kind: completion.kind,
          executionId: completion.executionId,
          error: String(kept),
        }),
      );
      throw error;
    }
  }

  private async apply(completion: RunCompletion, run: RunRef): Promise<CompletionResult> {
    const { ledger, clock, log, metrics } = this.deps;
    const keys = { jobId: run.jobId, pool: run.pool, kind: completion.kind, executionId: completion.executionId };
    // Who waits next is read while the job is read: one round trip less on the hand-off path. Not for an unlimited
    // pool: its jobs never wait on it, and that read is of the pool's own partition, which every ending job would hit
    // (a slot counted after all, taken before the pool was made unlimited, has its waiters read by the release).
    const oldest = isUnlimitedPool(run.pool, this.deps.settings) ? undefined : this.handOff.prefetch(run.pool);
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const record = await ledger.get(run.jobId);
      const decision = record ? onCompletion(record, completion.executionId) : { ignore: 'the job is unknown' };
      if ('ignore' in decision) {
        log.warn('completion does not match the job ledger, ignored', { ...keys, state: record?.state, why: decision.ignore });
        metrics.count(MetricName.IgnoredEvents);
        return CompletionResult.Ignored;
      }
      if ('done' in decision) {
        log.info('run ended, slot was already free', { ...keys, outcome: completion.outcome });
        return CompletionResult.AlreadyDone;
      }
      const now = clock.now();
      if (completion.outcome === RunOutcome.NotStarted && decision.step === 'complete') {
        const retried = await this.retryNotStarted(record!, completion, round === 0 ? oldest : undefined);
        if (retried !== undefined) return retried;
        continue; // the record changed under us: read it again
      }
      const failed = completion.outcome !== RunOutcome.Succeeded;
      const to = decision.step === 'giveBack' ? PROTOCOL.giveBack.to : failed ? JobState.Failed : JobState.Succeeded;
      const move = {
        jobId: run.jobId,
        version: record!.version,
        to,
        patch: {
          executionId: completion.executionId,
          endedAt: now,
          endedBy: endWriter(this.deps.random),
          lastError: failed && decision.step === 'complete' ? (completion.detail ?? 'run failed') : undefined,
        },
      };
      // A job of a set counts itself on its run (a dead job was counted when it was dead-lettered), as soon as its end is
      // written: before the job its slot goes to is started here, whose start may outlast this invocation (a retry of
      // the event finds the job ended and counts nothing).
      const ended = decision.step === 'complete' ? () => jobEnded(this.deps, moved(record!, move, now)) : undefined;
      if (await this.handOff.release(heldDemand(record!.spec, record!.lease), move, round === 0 ? oldest : undefined, ended)) {
        log.info('run ended, slot released', { ...keys, outcome: completion.outcome });
        return CompletionResult.Released;
      }
      // The record changed under us (the acquirer recorded the run, a duplicate event won): read it again.
    }
    throw new Error(`completion of ${completion.kind} ${completion.executionId} kept losing races`);
  }

  /**
   * A run that ended without ever starting (an ECS task that found no capacity: RunOutcome.NotStarted) is a refused
   * start, not a failed run: within the job's retry budget it is retried as one (protocol step notStarted). Its retry
   * is sent first, then the job goes back to queued, giving its slot up (handed to the first waiter). A crash between
   * leaves the message, which meets the job still running and is dropped as a duplicate; the step is then done again
   * when the event comes again (Lambda's retries) or the reconciler finds the task stopped (RunStatus.NotStarted), and
   * sends another retry first (any copy beyond the first is a duplicate). Past the budget the job ends failed, as any
   * run that failed. Undefined when the record changed meanwhile (read it again).
   */
  private async retryNotStarted(
    record: JobRecord,
    completion: RunCompletion,
    oldest: Prefetched | undefined,
  ): Promise<CompletionResult | undefined> {
    const { clock, settings, queue, log, metrics } = this.deps;
    const now = clock.now();
    const detail = completion.detail ?? 'the run never started';
    const keys = { jobId: record.jobId, pool: record.pool, kind: record.kind, executionId: completion.executionId };
    if (!withinRetryBudget(record.firstStartAt ?? now, now, settings.backoff)) {
      const move = {
        jobId: record.jobId,
        version: record.version,
        to: JobState.Failed,
        patch: {
          executionId: completion.executionId,
          endedAt: now,
          endedBy: endWriter(this.deps.random),
          lastError: `${detail} (retries used up)`,
        },
      };
      const ended = () => jobEnded(this.deps, moved(record, move, now));
      if (!(await this.handOff.release(heldDemand(record.spec, record.lease), move, oldest, ended))) return undefined;
      log.warn('run never started and the job is out of retries: failed', keys);
      return CompletionResult.Released;
    }
    const attempts = record.attempts + 1;
    const delay = retryDelaySeconds(attempts, settings.backoff, this.deps.random);
    await queue.send(encodeJobBody(record.spec), delay);
    const move = {
      jobId: record.jobId,
      version: record.version,
      to: PROTOCOL.notStarted.to,
      patch: { attempts, lastError: detail, replacesRun: completion.executionId, startRequested: false },
    };
    if (!(await this.handOff.release(heldDemand(record.spec, record.lease), move, oldest))) return undefined;
    metrics.count(MetricName.Retries, 1, record.pool);
    log.warn('run never started (no capacity): the job is retried', { ...keys, attempts, delaySeconds: delay, detail });
    return CompletionResult.Released;
  }
}
