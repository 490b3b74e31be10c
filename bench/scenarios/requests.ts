import { type Harness, perJob, type RequestsPerJob, waitUntil } from '../harness';
import { parkDirectly } from '../park';
import { type EarlyCompletions, minusEarly, minusPassFailures, type PassFailures } from '../tracer';
import { makeJobs, uniformRunTimes } from '../workload';

export interface RequestsParams {
  backlogs: number[];
  /** Limit while measuring: 1 makes hand-offs strictly one after another, so no two releasers race for a waiter. */
  limit: number;
  /** Also measure one window at this limit (hand-offs overlapping) at the largest backlog; 0: skip. */
  overlapLimit: number;
  runMinMs: number;
  runMaxMs: number;
  /** Completions let through before the window opens (the pool reaches its steady state). */
  warmup: number;
  /** Jobs measured per backlog: the window closes after this many more completions. */
  window: number;
  seed: number;
  timeoutMs: number;
}

export interface BacklogResult extends RequestsPerJob {
  backlog: number;
  /**
   * Reconciler runs the bench had to ask for during the window because the pool stalled with a slot held (a lost
   * completion; its requests are in the counts). An early completion needs none: the acquirer completes it.
   */
  heals: number;
  /** Completions in the window that beat the acquirer's write of the run record (noted, then completed by the acquirer). */
  earlyCompletions: EarlyCompletions;
  /** Waiting jobs counted in the table when the window opened and closed. */
  waitingAtStart: number;
  waitingAtEnd: number;
  windowJobs: number;
  windowMs: number;
  /** How long it took to park the backlog (the acquirer's park writes, by the bench: see parkDirectly). */
  parkMs: number;
}

export const poolForBacklog = (backlog: number) => `bench-rpj-${backlog}`;

export interface RequestsResult {
  byBacklog: Record<string, BacklogResult>;
  /**
   * The largest backlog again, at `overlapLimit`: what racing releasers add (duplicate wake-ups, cancelled passes).
   * transferAttempts / transferFailures count pass transactions; passFailures says why they were cancelled (targetGone:
   * a race lost to another releaser for the same waiter).
   */
  overlapping?: BacklogResult & {
    limit: number;
    wakeUpsPerJob: number;
    transferFailures: number;
    transferAttempts: number;
    passFailures: PassFailures;
  };
}

/**
 * Requests per job with B jobs waiting: park B jobs in a paused pool (written as the acquirer parks them, by the bench:
 * see parkDirectly; the jobs fed in below come through the queue), open it, and keep the backlog at B by enqueueing
 * a new job for every completion. Once `warmup` jobs have passed, count every request Sluice makes (and every
 * invocation) until `window` more have completed, and divide by `window`. Each job in the window pays its whole life:
 * arrival and parking, wake-up, start, completion and the hand-off it makes. The reconciler does not run (its cost is
 * per running job and period, not per backlog: measured apart).
 */
export async function runRequests(h: Harness, p: RequestsParams): Promise<RequestsResult> {
  const out: Record<string, BacklogResult> = {};
  let overlapping: RequestsResult['overlapping'];
  const largest = Math.max(...p.backlogs);
  for (const backlog of p.backlogs) {
    const pool = poolForBacklog(backlog);
    let fed = 0;
    const next = () => {
      const durations = uniformRunTimes(1, p.runMinMs, p.runMaxMs, p.seed + backlog * 7919 + fed);
      return makeJobs({ group: pool, pool, durations, tag: 'b', offset: backlog + fed++ });
    };
    const initial = makeJobs({
      group: pool,
      pool,
      durations: uniformRunTimes(backlog, p.runMinMs, p.runMaxMs, p.seed + backlog),
      tag: 'b',
    });
    h.log(`requests per job, backlog ${backlog}: parking ${backlog} jobs...`);
    const parkStart = Date.now();
    await parkDirectly(h, initial);
    await waitUntil(`${backlog} jobs parked in ${pool}`, async () => (await h.leases.countWaiters(pool)) >= backlog, p.timeoutMs, 200);
    const parkMs = Date.now() - parkStart;

    let feeding = true;
    const feedErrors: unknown[] = [];
    const unsubscribe = h.tracer.onCompletion((event) => {
      if (!feeding || event.group !== pool) return;
      h.enqueue(next()).catch((error: unknown) => feedErrors.push(error));
    });
    const measure = async (limit: number): Promise<BacklogResult> => {
      const done = h.tracer.endedCount(pool);
      await h.poolAdmin().setLimit(pool, limit);
      await h.waitEnded(pool, done + p.warmup, pool, p.timeoutMs);
      const from = h.snapshot();
      const heals0 = h.healed.get(pool) ?? 0;
      const early0 = h.tracer.earlyCompletionsOf(pool);
      const windowStart = Date.now();
      const waitingAtStart = await h.leases.countWaiters(pool);
      await h.waitEnded(pool, done + p.warmup + p.window, pool, p.timeoutMs);
      const to = h.snapshot();
      const windowMs = Date.now() - windowStart;
      const heals = (h.healed.get(pool) ?? 0) - heals0;
      const earlyCompletions = minusEarly(h.tracer.earlyCompletionsOf(pool), early0);
      const waitingAtEnd = await h.leases.countWaiters(pool);
      const result = {
        backlog,
        heals,
        earlyCompletions,
        ...perJob(from, to, p.window),
        waitingAtStart,
        waitingAtEnd,
        windowJobs: p.window,
        windowMs,
        parkMs,
      };
      h.log(
        `  limit ${limit}: ${result.total} requests per job (waiting ${waitingAtStart} -> ${waitingAtEnd}; parked in ${(parkMs / 1000).toFixed(1)} s, window ${(windowMs / 1000).toFixed(1)} s)`,
      );
      return result;
    };
    try {
      out[String(backlog)] = await measure(p.limit);
      if (backlog === largest && p.overlapLimit > 0) {
        const t0 = { attempts: h.tracer.transferAttempts, failed: h.tracer.transferFailures, reasons: { ...h.tracer.passFailures } };
        const result = await measure(p.overlapLimit);
        overlapping = {
          ...result,
          limit: p.overlapLimit,
          wakeUpsPerJob: result.ops['sqs.SendMessage'] ?? 0,
          transferAttempts: h.tracer.transferAttempts - t0.attempts,
          transferFailures: h.tracer.transferFailures - t0.failed,
          passFailures: minusPassFailures(h.tracer.passFailures, t0.reasons),
        };
      }
    } finally {
      feeding = false;
      unsubscribe();
      // Close the pool: running jobs finish, their slots go away, the backlog stays parked.
      await h.poolAdmin().setLimit(pool, 0);
      await h.settle(pool);
    }
    if (feedErrors.length) throw new Error(`feeding the backlog failed: ${String(feedErrors[0])}`);
  }
  return { byBacklog: out, ...(overlapping ? { overlapping } : {}) };
}
