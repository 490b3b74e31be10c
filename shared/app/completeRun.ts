import { type RunCompletion, RunOutcome } from '../domain/job';
import { isTerminal, JobState } from '../domain/jobState';
import type { RunRef } from '../ports/jobLedger';
import { MetricName, type SluiceDeps } from './deps';
import { HAND_OFF_CANDIDATES, HandOff } from './handOff';

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

/**
 * The releaser: a run ended (its event arrived, or the reconciler found it ended). Marks the job finished and frees
 * its slot, handing it to the next waiting job. Safe to repeat: only the first completion of a run frees a slot.
 */
export class CompleteRun {
  private readonly handOff: HandOff;

  constructor(private readonly deps: SluiceDeps) {
    this.handOff = new HandOff(deps);
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
    const now = clock.now();
    const to = completion.outcome === RunOutcome.Succeeded ? JobState.Succeeded : JobState.Failed;
    // Who waits next is read while the job is marked finished: one round trip less on the hand-off path.
    const oldest = this.deps.leases.oldestWaiters(run.pool, HAND_OFF_CANDIDATES);
    oldest.catch(() => undefined); // awaited below; an early failure must not be reported as unhandled
    // From starting too: the event can beat the acquirer's own "running" write.
    const moved = await ledger.transition(
      run.jobId,
      [JobState.Starting, JobState.Running],
      to,
      now,
      {
        executionId: completion.executionId,
        endedAt: now,
        lastError: to === JobState.Failed ? (completion.detail ?? 'run failed') : undefined,
      },
      completion.executionId,
    );
    if (!moved) {
      const record = await ledger.get(run.jobId);
      if (!record || !isTerminal(record.state) || record.executionId !== completion.executionId) {
        log.warn('completion does not match the job ledger, ignored', {
          jobId: run.jobId,
          pool: run.pool,
          kind: completion.kind,
          executionId: completion.executionId,
          state: record?.state,
        });
        metrics.count(MetricName.IgnoredEvents);
        return CompletionResult.Ignored;
      }
    }
    // Released even when the ledger had it finished already: a release lost to a crash is done now; a second is a no-op.
    const released = await this.handOff.releaseAndHandOff(run.pool, run.jobId, oldest);
    log.info(released ? 'run ended, slot released' : 'run ended, slot was already free', {
      jobId: run.jobId,
      pool: run.pool,
      kind: completion.kind,
      executionId: completion.executionId,
      outcome: completion.outcome,
    });
    return released ? CompletionResult.Released : CompletionResult.AlreadyDone;
  }
}
