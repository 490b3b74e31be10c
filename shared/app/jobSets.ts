import type { JobSpec } from '../domain/job';
import { encodeJobBody } from '../domain/jobBody';
import { isTerminal, JobState } from '../domain/jobState';
import { type JobSet, jobsOfRun, runOfInvocation, runOfScheduledTime, setJobId } from '../domain/jobSets';
import { UnknownJobSetError } from '../errors';
import { SluiceDetailType } from '../ports/eventPublisher';
import type { SetRun, SetRunSummary } from '../ports/setRunStore';
import type { JobSetDeps, SluiceDeps } from './deps';
import { inParallel } from './inParallel';

/** An open run's records are read again at most this often by the reconciler (a count an invocation missed). */
export const CHECK_OPEN_RUN_EVERY_MS = 15 * 60_000;
/** A completed run whose event is not noted as sent after this long had its sender die: sent again (at least once). */
export const NOTIFY_GRACE_MS = 60_000;
/** Records read at once when checking a run. */
const READ_PARALLEL = 16;

export const FireResult = { Enqueued: 'enqueued', Paused: 'paused' } as const;
export type FireResult = (typeof FireResult)[keyof typeof FireResult];

/** A schedule's fire (scheduledTime, from EventBridge Scheduler) or a run started by hand (invocationId). */
export interface FireRequest {
  set: string;
  scheduledTime?: string;
  invocationId?: string;
}

type Deps = Pick<SluiceDeps, 'ledger' | 'queue' | 'clock' | 'log'> & { sets: JobSetDeps };

/**
 * Runs job sets: a fire enqueues the set's jobs with ids derived from the set, the run and each job's key (a second
 * fire for the same time, or the same fire invoked again after dying part way, sends the same ids: the acquirer runs
 * each job once). Each job that ends counts itself on its run; when the count reaches the total, the run's records
 * are read, and once all are final the run is completed (once) and `Sluice Job Set Run Completed` is put on the bus.
 * Counting is a hint and the records are the truth: a count missed by an invocation that died is made up by the
 * reconciler, which reads open runs now and then (`sweep`).
 */
export class JobSetRunner {
  constructor(
    private readonly deps: Deps,
    private readonly definitions: readonly JobSet[],
  ) {}

  async fire(request: FireRequest): Promise<{ result: FireResult; run?: string; jobs?: number; created?: boolean }> {
    const { store } = this.deps.sets;
    const set = this.definitions.find((s) => s.name === request.set);
    if (!set) throw new UnknownJobSetError(`no job set '${request.set}' is declared`);
    const byHand = request.invocationId !== undefined;
    const run = byHand ? runOfInvocation(request.invocationId!) : runOfScheduledTime(request.scheduledTime ?? '');
    // A paused set skips its scheduled fires; a run asked for by hand goes ahead.
    if (!byHand && (await store.isPaused(set.name))) {
      this.deps.log.info('job set paused: scheduled run skipped', { set: set.name, run });
      return { result: FireResult.Paused, run };
    }
    const now = this.deps.clock.now();
    const created = await store.startRun({
      set: set.name,
      run,
      total: set.jobs.length,
      keys: set.jobs.map((job) => job.key),
      startedAt: now,
      ...(!byHand && { scheduledFor: Date.parse(request.scheduledTime!) }),
    });
    // Sent even when the run exists: this may be the same fire again after an invocation died part way.
    const jobs = jobsOfRun(set, run);
    await this.deps.queue.sendAll(jobs.map((job) => encodeJobBody(job)));
    this.deps.log.info('job set run enqueued', { set: set.name, run, jobs: jobs.length, created });
    return { result: FireResult.Enqueued, run, jobs: jobs.length, created };
  }

  /** A job reached a final state: counts it on its run, and completes the run if it was the last. Never throws. */
  async jobEnded(spec: JobSpec): Promise<void> {
    if (!spec.jobSet) return;
    const { name, run } = spec.jobSet;
    try {
      const counted = await this.deps.sets.store.countEnded(name, run);
      if (counted && counted.ended >= counted.total && counted.completedAt === undefined) await this.check(counted);
    } catch (error) {
      // The reconciler reads open runs: a count lost here delays the run's completion, never loses it.
      this.deps.log.warn('could not count a job set run', { set: name, run, jobId: spec.id, error: String(error) });
    }
  }

  /** The reconciler's pass over open runs: checks those due, and sends a completion event whose sender died. */
  async sweep(max = 100): Promise<number> {
    const { store } = this.deps.sets;
    const now = this.deps.clock.now();
    let completed = 0;
    for (const run of await store.openRuns(max)) {
      if (run.completedAt !== undefined) {
        if (now - run.completedAt > NOTIFY_GRACE_MS) await this.notify(run, run.summary!);
        continue;
      }
      const due = run.ended >= run.total || now - (run.checkedAt ?? run.startedAt) > CHECK_OPEN_RUN_EVERY_MS;
      if (due && (await this.check(run))) completed++;
    }
    return completed;
  }

  /** Reads the run's records; completes it if all are final. True if this call completed it. */
  async check(run: SetRun): Promise<boolean> {
    const { store } = this.deps.sets;
    const summary = await this.summarize(run);
    const now = this.deps.clock.now();
    if (summary.open > 0) {
      await store.markChecked(run.set, run.run, now);
      return false;
    }
    if (!(await store.complete(run.set, run.run, summary, now))) return false;
    await this.notify(run, summary);
    return true;
  }

  /** What the run's jobs came to, from their records (a job not in the ledger yet is open). */
  async summarize(run: Pick<SetRun, 'set' | 'run' | 'keys'>): Promise<SetRunSummary> {
    const ids = run.keys.map((key) => setJobId(run.set, run.run, key));
    const states = await inParallel(ids, READ_PARALLEL, async (id) => (await this.deps.ledger.get(id))?.state);
    const summary: SetRunSummary = { total: ids.length, succeeded: 0, failed: 0, open: 0, failedIds: [] };
    states.forEach((state, i) => {
      if (state === JobState.Succeeded) summary.succeeded++;
      else if (state !== undefined && isTerminal(state)) {
        summary.failed++;
        summary.failedIds.push(ids[i]!);
      } else summary.open++;
    });
    return summary;
  }

  private async notify(run: SetRun, summary: SetRunSummary): Promise<void> {
    await this.deps.sets.events.publish(SluiceDetailType.SetRunCompleted, {
      set: run.set,
      run: run.run,
      ...(run.scheduledFor !== undefined && { scheduledFor: new Date(run.scheduledFor).toISOString() }),
      startedAt: new Date(run.startedAt).toISOString(),
      total: summary.total,
      succeeded: summary.succeeded,
      failed: summary.failed,
      failedIds: summary.failedIds,
    });
    await this.deps.sets.store.markNotified(run.set, run.run, this.deps.clock.now());
    this.deps.log.info('job set run completed', { set: run.set, run: run.run, succeeded: summary.succeeded, failed: summary.failed });
  }
}
