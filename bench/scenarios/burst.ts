import type { SimRun } from '../../local/simulators/model';
import { type Harness, waitUntil } from '../harness';
import { type Distribution, runChanges } from '../metrics';
import { measureHandoffs } from './handoff';
import { makeJobs, uniformRunTimes } from '../workload';

/**
 * The morning Sluice exists for (issue 13): `jobs` sent at once to a pool of `limit`, short runs, so hand-offs happen
 * while the burst is still arriving. Measured from the simulator's record of runs and the tracer:
 * - hand-off latency (completion event put on the bus -> the next job's start call, exact pairing) for completions
 *   while the burst arrives (until every job's message has been taken by the acquirer);
 * - the shortfall: slot-seconds the pool ran below its limit from the moment it first filled until the end of the
 *   measured window, jobs waiting all along (time-weighted, from the runs' start and end times).
 * Then the pool is paused and its runs in progress end; the rest of the backlog stays parked (it costs nothing).
 */

export interface BurstParams {
  pool: string;
  jobs: number;
  limit: number;
  runMinMs: number;
  runMaxMs: number;
  /** How long hand-offs are measured after the last arrival, ms. */
  afterArrivalsMs: number;
  seed: number;
  timeoutMs: number;
}

export interface BurstResult {
  jobs: number;
  limit: number;
  runMinMs: number;
  runMaxMs: number;
  /** First start call -> every job's message taken (parked or started), ms. */
  arrivingMs: number;
  /** Hand-offs whose completion came while the burst was arriving. */
  handoffs: Distribution & { oneHop: number; segments: { bus: Distribution; releaserStart: Distribution; queue: Distribution } };
  /** Hand-offs whose completion came after it (until the window ended). */
  handoffsAfter: Distribution;
  handoffP50Ms: number;
  handoffP99Ms: number;
  /** Slot-seconds below the limit while jobs waited (from the pool first full to the window's end). */
  shortfallSlotSeconds: number;
  /** The same over the window's slot-seconds. */
  shortfallShare: number;
  /** Fewest runs in progress during the window. */
  minInProgress: number;
  windowMs: number;
  /** Jobs started in the window. */
  started: number;
}

export async function runBurst(h: Harness, p: BurstParams): Promise<BurstResult> {
  const durations = uniformRunTimes(p.jobs, p.runMinMs, p.runMaxMs, p.seed);
  const jobs = makeJobs({ group: p.pool, pool: p.pool, durations, tag: 'b' });
  h.log(`burst: ${p.jobs} jobs at once, limit ${p.limit}, runs ${p.runMinMs}-${p.runMaxMs} ms`);
  const ids = new Set(jobs.map((job) => job.spec.id));
  const taken = () => {
    let n = 0;
    for (const id of ids) if (h.tracer.receives.has(id)) n++;
    return n;
  };
  await h.enqueue(jobs);
  await waitUntil('the burst arrived', () => taken() >= p.jobs, p.timeoutMs, 200);
  const arrivedAt = Math.max(...[...ids].map((id) => h.tracer.receives.get(id)![0]!));
  // Some hand-offs at rest too, with the backlog still waiting.
  await waitUntil('hand-offs after the burst', () => Date.now() >= arrivedAt + p.afterArrivalsMs, p.timeoutMs, 100);
  const windowEnd = Date.now();
  await h.poolAdmin().setLimit(p.pool, 0);
  await waitUntil('the runs in progress end', () => h.runsOf(p.pool).every((run) => run.endedAt !== undefined), p.timeoutMs, 200);
  const runs = h.runsOf(p.pool);
  const firstStart = Math.min(...runs.map((run) => run.startCallAt));
  const full = poolFullAt(runs, p.limit) ?? firstStart;
  const during = measureHandoffs(runs, h.tracer, p.limit, { from: full, to: arrivedAt });
  const after = measureHandoffs(runs, h.tracer, p.limit, { from: arrivedAt, to: windowEnd });
  const { shortfallMs, minInProgress } = shortfall(runs, p.limit, full, windowEnd);
  const windowMs = windowEnd - full;
  const result: BurstResult = {
    jobs: p.jobs,
    limit: p.limit,
    runMinMs: p.runMinMs,
    runMaxMs: p.runMaxMs,
    arrivingMs: arrivedAt - firstStart,
    handoffs: {
      ...pick(during),
      oneHop: during.oneHop,
      segments: { bus: during.segments.bus, releaserStart: during.segments.releaserStart, queue: during.segments.queue },
    },
    handoffsAfter: pick(after),
    handoffP50Ms: during.p50Ms,
    handoffP99Ms: during.p99Ms,
    shortfallSlotSeconds: Math.round(shortfallMs) / 1000,
    shortfallShare: windowMs > 0 ? Math.round((shortfallMs / (windowMs * p.limit)) * 10_000) / 10_000 : 0,
    minInProgress,
    windowMs,
    started: runs.filter((run) => run.startedAt <= windowEnd).length,
  };
  h.log(
    `  arrived in ${result.arrivingMs} ms; ${during.n} hand-offs while arriving: p50 ${during.p50Ms} ms, p99 ${during.p99Ms} ms (${during.oneHop} one hop); after: p50 ${after.p50Ms} ms, p99 ${after.p99Ms} ms; shortfall ${result.shortfallSlotSeconds} slot-s (${(result.shortfallShare * 100).toFixed(1)}%), fewest in progress ${minInProgress}`,
  );
  return result;
}

const pick = (d: Distribution): Distribution => ({ n: d.n, p50Ms: d.p50Ms, p99Ms: d.p99Ms, maxMs: d.maxMs, meanMs: d.meanMs });

/** When `limit` runs were first in progress at once. */
export function poolFullAt(runs: readonly SimRun[], limit: number): number | undefined {
  let n = 0;
  for (const change of runChanges(runs)) {
    n += change.delta;
    if (n >= limit) return change.at;
  }
  return undefined;
}

/** Slot-milliseconds below `limit` in [from, to], and the fewest runs in progress then. */
export function shortfall(runs: readonly SimRun[], limit: number, from: number, to: number): { shortfallMs: number; minInProgress: number } {
  let n = 0;
  let previous = Number.NEGATIVE_INFINITY;
  let lost = 0;
  let min = Number.POSITIVE_INFINITY;
  const span = (until: number) => {
    const a = Math.max(previous, from);
    const b = Math.min(until, to);
    if (b <= a) return;
    lost += Math.max(0, limit - n) * (b - a);
    min = Math.min(min, n);
  };
  for (const change of runChanges(runs)) {
    span(change.at);
    n += change.delta;
    previous = change.at;
  }
  span(to);
  return { shortfallMs: lost, minInProgress: Number.isFinite(min) ? min : n };
}
