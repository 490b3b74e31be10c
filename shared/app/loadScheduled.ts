import { encodeJobBody } from '../domain/jobBody';
import { JobState } from '../domain/jobState';
import { bucketKey, delaySecondsUntilDue, DUE_SHARDS, HORIZON_MS, minuteOf, minutesToLoad } from '../domain/notBefore';
import { PROTOCOL } from '../domain/protocol';
import { MetricName, type SluiceDeps } from './deps';
import { inParallel } from './inParallel';

/** What one loader run did. */
export interface LoadReport {
  /** jobs sent on their way (their delayed message sent, then moved to queued: protocol step load) */
  loaded: number;
  /** index entries whose job had moved on already (the index lags the table a moment), or another loader loaded first */
  skipped: number;
  /** the due index's (minute, shard) buckets read */
  buckets: number;
  /** false when the time budget ran out first: the rest is loaded next run, from the cursor */
  finished: boolean;
}

export interface LoaderOptions {
  /** how long one run may spend (it runs inside the reconciler's invocation, before the reconcile) */
  budgetMs: number;
  /** jobs loaded at once */
  concurrency: number;
  /** index entries read per page */
  pageSize: number;
  /** with no cursor yet (the first run ever), how many minutes back it starts */
  firstRunLookbackMinutes: number;
}

/**
 * 15 s: the reconciler's own budget is 90 s of its 120 s timeout, and the loader runs first in the same invocation. At
 * 32 at once (a read, a send and a write each: some 10-20 ms on AWS) a run loads on the order of 20,000 jobs; the rest
 * next run, 2 minutes later, well within the 15 minutes a job is loaded ahead.
 */
export const DEFAULT_LOADER_OPTIONS: LoaderOptions = { budgetMs: 15_000, concurrency: 32, pageSize: 100, firstRunLookbackMinutes: 30 };

/**
 * The loader: moves the scheduled jobs due within the next 15 minutes from the due index onto the job queue, each with
 * DelaySeconds = the whole seconds left (the acquirer waits the sub-second rest). It reads the index from its cursor
 * (the first minute not loaded in full) to the end of the horizon, shard by shard.
 *
 * Each job: read its record (consistent: the version to fence with), send its message, then `load` it (scheduled ->
 * queued, fenced by that version, off the index). Send first: a loader dying between the two leaves the job scheduled
 * and on the index, and the next run sends it again; the two copies meet the version fence in the acquirer (one
 * takes, the other is a duplicate), so a crash mid-batch or two loaders at once lose no job and start none twice. The
 * cursor moves past a minute only once every shard of it was read whole and every job in it loaded.
 */
export class Loader {
  private readonly options: LoaderOptions;

  constructor(
    private readonly deps: SluiceDeps,
    options: Partial<LoaderOptions> = {},
  ) {
    this.options = { ...DEFAULT_LOADER_OPTIONS, ...options };
  }

  async run(): Promise<LoadReport> {
    const report: LoadReport = { loaded: 0, skipped: 0, buckets: 0, finished: true };
    const { schedule, clock } = this.deps;
    if (!schedule) return report;
    const started = clock.now();
    const upTo = started + HORIZON_MS;
    const cursor = (await schedule.loaderCursor()) ?? minuteOf(started) - this.options.firstRunLookbackMinutes;
    for (const { minute, whole } of minutesToLoad(cursor, started)) {
      for (let shard = 0; shard < DUE_SHARDS; shard++) {
        let after: string | undefined;
        do {
          if (clock.now() - started >= this.options.budgetMs) return { ...report, finished: false };
          const page = await schedule.due(bucketKey(minute, shard), upTo, { after, max: this.options.pageSize });
          report.buckets += after === undefined ? 1 : 0;
          const outcomes = await inParallel(page.jobs, this.options.concurrency, (job) => this.loadOne(job.jobId, job.dueAt));
          report.loaded += outcomes.filter(Boolean).length;
          report.skipped += outcomes.filter((loaded) => !loaded).length;
          after = page.next;
        } while (after !== undefined);
      }
      if (whole) await schedule.advanceLoaderCursor(minute + 1);
    }
    if (report.loaded > 0) this.deps.metrics.count(MetricName.Loaded, report.loaded);
    return report;
  }

  /** Sends one scheduled job, then moves it to queued (protocol step load); false if it had moved on already. */
  private async loadOne(jobId: string, dueAt: number): Promise<boolean> {
    const { ledger, schedule, queue, clock, log } = this.deps;
    const record = await ledger.get(jobId);
    if (!record || record.state !== JobState.Scheduled) return false;
    const now = clock.now();
    // The hint: the job is known, so its delivery reads the record rather than try to create it (a write bound to fail).
    await queue.send(encodeJobBody(record.spec), delaySecondsUntilDue(dueAt, now), { reserved: true });
    const loaded = await schedule!.load({ jobId, version: record.version, to: PROTOCOL.load.to }, now);
    if (loaded) log.debug('scheduled job sent', { jobId, pool: record.pool, kind: record.kind, dueAt });
    return loaded;
  }
}
