import { encodeJobBody } from '../domain/jobBody';
import { isTerminal, JobState } from '../domain/jobState';
import {
  type JobSet,
  jobsOfRun,
  MAX_LISTED_FAILED_IDS,
  openRunDue,
  runOfInvocation,
  runOfScheduledTime,
  setJobId,
} from '../domain/jobSets';
import { UnknownJobSetError } from '../errors';
import { SluiceDetailType } from '../ports/eventPublisher';
import type { OpenRunCursor, SetRun, SetRunStore, SetRunSummary } from '../ports/setRunStore';
import type { JobSetDeps, SluiceDeps, SluiceSettings } from './deps';
import { inParallel } from './inParallel';
import type { JobSpec } from '../kinds/registry';

/** An open run's records are read at least this often by the reconciler (a run none of whose jobs was counted). */
export const CHECK_OPEN_RUN_EVERY_MS = 15 * 60_000;
/**
 * Without the reconciler's settings, how long a run's counting must be quiet before its records are read. With them it
 * is the start grace: an invocation that was going to count has counted by then, or died (openRunDue).
 */
export const DEFAULT_COUNT_QUIET_MS = 90_000;
/** A completed run whose event is not noted as sent after this long had its sender die: sent again (at least once). */
export const NOTIFY_GRACE_MS = 60_000;
/** Records read at once when checking a run. */
const READ_PARALLEL = 16;
/** Open runs read per page by the reconciler's sweep. */
export const OPEN_RUNS_PER_PAGE = 50;
/**
 * The share of the reconciler's time budget its sweep of open runs may take (it runs first; the pools' holders get the
 * rest). Without the reconciler's settings (a caller of its own), a sweep takes at most DEFAULT_SWEEP_BUDGET_MS.
 */
export const SWEEP_BUDGET_SHARE = 0.5;
export const DEFAULT_SWEEP_BUDGET_MS = 30_000;

/**
 * Where the last sweep stopped, by store: the next sweep of this process goes on from there (a cold start begins again
 * from the first open run), as the reconciler keeps its place in each pool's holders.
 */
const resumeAfter = new WeakMap<SetRunStore, OpenRunCursor>();

export const FireResult = { Enqueued: 'enqueued', Paused: 'paused' } as const;
export type FireResult = (typeof FireResult)[keyof typeof FireResult];

/** A schedule's fire (scheduledTime, from EventBridge Scheduler) or a run started by hand (invocationId). */
export interface FireRequest {
  set: string;
  scheduledTime?: string;
  invocationId?: string;
}

type Deps = Pick<SluiceDeps, 'ledger' | 'queue' | 'clock' | 'log'> & {
  sets: JobSetDeps;
  /** the reconciler's: its sweep takes a share of its time budget */
  settings?: Pick<SluiceSettings, 'reconcileBudgetMs' | 'startGraceMs'>;
};

/** What one sweep of the open runs did. */
export interface SweepReport {
  /** open runs looked at (due or not) */
  looked: number;
  /** runs whose records were read */
  checked: number;
  completed: number;
  /** runs that could not be checked (logged; looked at again next time) */
  failed: number;
  /** the time budget ran out before the last open run: the next sweep goes on from there */
  unfinished: boolean;
}

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
    // A paused set skips its scheduled fires; a run asked for by hand goes ahead. A fire already under way (its run
    // written by an attempt that died, retried by Lambda) finishes: a pause stops the next fires, not one half sent.
    if (!byHand && (await store.isPaused(set.name)) && !(await store.getRun(set.name, run))) {
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
      const counted = await this.deps.sets.store.countEnded(name, run, spec.id, this.deps.clock.now());
      if (counted && counted.ended >= counted.total && counted.completedAt === undefined) await this.check(counted);
    } catch (error) {
      // The reconciler reads open runs: a count lost here delays the run's completion (by openRunDue's quiet period
      // when the run is nearly counted and was not read since its last count, else by up to its periodic read), never
      // loses it.
      this.deps.log.warn('could not count a job set run', { set: name, run, jobId: spec.id, error: String(error) });
    }
  }

  /**
   * The reconciler's pass over open runs, a page at a time: checks those due, and sends again a completion event whose
   * sender died. It stops when its time is up (`deadline`, else its share of the reconciler's budget from now), after at
   * least one run, and the next sweep goes on after the last run it looked at: every open run is looked at in turn.
   */
  async sweep(options: { deadline?: number } = {}): Promise<SweepReport> {
    const { store } = this.deps.sets;
    const { clock } = this.deps;
    const budgetMs = this.deps.settings ? this.deps.settings.reconcileBudgetMs * SWEEP_BUDGET_SHARE : DEFAULT_SWEEP_BUDGET_MS;
    const deadline = options.deadline ?? clock.now() + budgetMs;
    const report: SweepReport = { looked: 0, checked: 0, completed: 0, failed: 0, unfinished: false };
    let after = resumeAfter.get(store);
    for (;;) {
      const page = await store.openRuns({ ...(after && { after }), max: OPEN_RUNS_PER_PAGE });
      for (const run of page.runs) {
        if (report.looked > 0 && clock.now() >= deadline) {
          resumeAfter.set(store, after!);
          return { ...report, unfinished: true };
        }
        report.looked++;
        after = { set: run.set, run: run.run };
        // One run that cannot be checked (a read throttled, say) must not keep the sweep from the runs after it.
        try {
          await this.look(run, report);
        } catch (error) {
          report.failed++;
          this.deps.log.error('reconciler could not check a job set run', { set: run.set, run: run.run, error: String(error) });
        }
      }
      if (!page.next) {
        resumeAfter.delete(store);
        return report;
      }
      after = page.next;
    }
  }

  /** One open run: its completion event sent again if its sender died, or its records read if it is due. */
  private async look(run: SetRun, report: SweepReport): Promise<void> {
    const now = this.deps.clock.now();
    if (run.completedAt !== undefined) {
      if (now - run.completedAt > NOTIFY_GRACE_MS) await this.notify(run, run.summary!);
      return;
    }
    const quietMs = this.deps.settings?.startGraceMs ?? DEFAULT_COUNT_QUIET_MS;
    if (!openRunDue(run, now, { quietMs, everyMs: CHECK_OPEN_RUN_EVERY_MS })) return;
    report.checked++;
    if (await this.check(run)) report.completed++;
  }

  /** Reads the run's records; completes it if all are final. True if this call completed it. */
  async check(run: SetRun): Promise<boolean> {
    const { store } = this.deps.sets;
    const summary = await this.summarize(run);
    const now = this.deps.clock.now();
    if (summary.open > 0) {
      await store.markChecked(run.set, run.run, now, summary.open);
      return false;
    }
    // A write whose answer was lost meets its own effect when the SDK sends it again ("condition failed"): the run
    // completed at this very time is this check's own completion, which it goes on to announce (else the event would
    // wait for the sweep's NOTIFY_GRACE_MS).
    if (!(await store.complete(run.set, run.run, summary, now)) && (await store.getRun(run.set, run.run))?.completedAt !== now)
      return false;
    await this.notify(run, summary);
    return true;
  }

  /**
   * What the run's jobs came to, from their records (a job not in the ledger yet is open). The summary names at most
   * MAX_LISTED_FAILED_IDS failed jobs (it is written on the run's item and sent in its event); `failedJobs` lists all.
   */
  async summarize(run: Pick<SetRun, 'set' | 'run' | 'keys'>): Promise<SetRunSummary> {
    const { summary, failedIds } = await this.read(run);
    return { ...summary, failedIds: failedIds.slice(0, MAX_LISTED_FAILED_IDS) };
  }

  /** Every failed job of the run (their ids, in the set's order), from the jobs' records. */
  async failedJobs(run: Pick<SetRun, 'set' | 'run' | 'keys'>): Promise<string[]> {
    return (await this.read(run)).failedIds;
  }

  private async read(
    run: Pick<SetRun, 'set' | 'run' | 'keys'>,
  ): Promise<{ summary: Omit<SetRunSummary, 'failedIds'>; failedIds: string[] }> {
    const ids = run.keys.map((key) => setJobId(run.set, run.run, key));
    const states = await inParallel(ids, READ_PARALLEL, async (id) => (await this.deps.ledger.get(id))?.state);
    const summary = { total: ids.length, succeeded: 0, failed: 0, open: 0 };
    const failedIds: string[] = [];
    states.forEach((state, i) => {
      if (state === JobState.Succeeded) summary.succeeded++;
      else if (state !== undefined && isTerminal(state)) {
        summary.failed++;
        failedIds.push(ids[i]!);
      } else summary.open++;
    });
    return { summary, failedIds };
  }

  private async notify(run: SetRun, summary: SetRunSummary): Promise<void> {
    await this.deps.sets.events.publish(SluiceDetailType.SetRunCompleted, completionDetail(run, summary));
    await this.deps.sets.store.markNotified(run.set, run.run, this.deps.clock.now());
    this.deps.log.info('job set run completed', { set: run.set, run: run.run, succeeded: summary.succeeded, failed: summary.failed });
  }
}

/**
 * The detail of `Sluice Job Set Run Completed`. Bounded by construction (the summary lists at most
 * MAX_LISTED_FAILED_IDS ids), so its PutEvents entry stays under EventBridge's 256 KB (test/unit/domain/jobSets.test.ts).
 */
export function completionDetail(
  run: Pick<SetRun, 'set' | 'run' | 'scheduledFor' | 'startedAt'>,
  summary: SetRunSummary,
): Record<string, unknown> {
  return {
    set: run.set,
    run: run.run,
    ...(run.scheduledFor !== undefined && { scheduledFor: new Date(run.scheduledFor).toISOString() }),
    startedAt: new Date(run.startedAt).toISOString(),
    total: summary.total,
    succeeded: summary.succeeded,
    failed: summary.failed,
    failedIds: summary.failedIds.slice(0, MAX_LISTED_FAILED_IDS),
  };
}
