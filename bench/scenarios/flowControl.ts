import type { SimRun } from '../../local/simulators/model';
import { type Harness, perJob, waitUntil } from '../harness';
import { percentile, type RunSpan, runChanges } from '../metrics';
import { type ModelJob, modelRuns } from '../weightsModel';
import { type BenchJob, logNormalRunTimes, makeJobs, type RunTimes, uniformRunTimes } from '../workload';
import { seededRandom } from '../../local/random';
import type { JobSpec } from '../../shared/kinds/registry';
import { runLimitMsOf } from '../../shared/domain/job';

/**
 * Flow control (issue 14), measured from the simulator's own record of runs:
 * - fairness: one tenant sends `bigJobs`, then (once they all wait) another sends `smallJobs`; how many starts (each a
 *   hand-off: the pool is full) happen from the small tenant's arrival until its last job started, against the bound
 *   `ceil(smallJobs / its share)` with two tenants sharing the pool;
 * - weights: jobs of weights 1, 2, 5 and 10 on a budget of `budget` units, without and with declared run limits
 *   (strict order, backfill): the units of the runs in progress never pass it, how much of it is used while jobs wait,
 *   and how long the heaviest jobs wait.
 */

export interface FairnessParams {
  pool: string;
  limit: number;
  bigJobs: number;
  smallJobs: number;
  runMinMs: number;
  runMaxMs: number;
  seed: number;
  timeoutMs: number;
}

export interface FairnessResult {
  limit: number;
  bigJobs: number;
  smallJobs: number;
  /** starts from the small tenant's arrival to its last job's start (its own included) */
  smallTenantLastStartHandOffs: number;
  /** ceil(smallJobs / (1/2)): its share with two tenants */
  boundHandOffs: number;
  /** the big tenant's jobs still waiting when the small tenant's last job started: it did not wait for them */
  bigJobsStillWaiting: number;
  /** the small tenant's jobs started in the order they were sent */
  smallInOrder: boolean;
}

export async function runFairness(h: Harness, p: FairnessParams): Promise<FairnessResult> {
  const durations = uniformRunTimes(p.bigJobs + p.smallJobs, p.runMinMs, p.runMaxMs, p.seed);
  const withKey = (jobs: BenchJob[], key: string): BenchJob[] =>
    jobs.map((job) => ({ ...job, spec: { ...job.spec, fairnessKey: key } as JobSpec }));
  const big = withKey(makeJobs({ group: p.pool, pool: p.pool, durations: durations.slice(0, p.bigJobs), tag: 'big', glueEvery: 0 }), 'big');
  const small = withKey(makeJobs({ group: p.pool, pool: p.pool, durations: durations.slice(p.bigJobs), tag: 'small', glueEvery: 0 }), 'small');
  await h.enqueue(big);
  // The big tenant's backlog is in (every job started or parked, but for a few in flight) before the small one arrives.
  await waitUntil(
    'the big tenant waits',
    async () => startsOf(h, p.pool, 'big').length + (await h.leases.countWaiters(p.pool)) >= p.bigJobs - p.limit,
    p.timeoutMs,
    1000, // counting thousands of waiters is a query of its own: not too often
  );
  const arrivedAt = Date.now();
  await h.enqueue(small);
  await waitUntil('the small tenant started', () => startsOf(h, p.pool, 'small').length >= p.smallJobs, p.timeoutMs, 50);
  const starts = [...h.runsOf(p.pool)].sort((a, b) => a.startCallAt - b.startCallAt);
  const smallStarts = starts.filter((run) => isOf(run, 'small'));
  const lastSmall = smallStarts[smallStarts.length - 1]!;
  const handOffs = starts.filter((run) => run.startCallAt >= arrivedAt && run.startCallAt <= lastSmall.startCallAt).length;
  const bigStarted = starts.filter((run) => isOf(run, 'big') && run.startCallAt <= lastSmall.startCallAt).length;
  const order = smallStarts.map((run) => run.name);
  // Measured. The rest of the backlog is not the point (at this limit it would take minutes): the pool is paused and
  // the runs in progress end; the scenario runs last, and the stack stops with the rest still waiting.
  await h.poolAdmin().setLimit(p.pool, 0);
  await waitUntil('the runs in progress end', () => h.runsOf(p.pool).every((run) => run.endedAt !== undefined), p.timeoutMs, 200);
  return {
    limit: p.limit,
    bigJobs: p.bigJobs,
    smallJobs: p.smallJobs,
    smallTenantLastStartHandOffs: handOffs,
    boundHandOffs: Math.ceil(p.smallJobs / (1 / 2)),
    bigJobsStillWaiting: p.bigJobs - bigStarted,
    smallInOrder: order.every((name, i) => i === 0 || order[i - 1]! < name),
  };
}

export interface WeightsParams {
  pool: string;
  budget: number;
  jobs: number;
  runTimes: RunTimes;
  seed: number;
  timeoutMs: number;
  /**
   * The second round's jobs declare a run limit (`runSeconds`) of their run time times this, as a user who knows
   * roughly how long each job takes would (runs do not reach their limit: the rule is checked against the limits).
   */
  runLimitFactor: number;
}

/** One round of the weighted jobs, measured from the simulator's own record. */
export interface WeightsRound {
  /** most units of runs in progress at any moment */
  maxUnitsInUse: number;
  /** time-weighted units in use over the budget, from the first start to the last start (jobs were waiting all along) */
  unitUtilization: number;
  /** first start call to last run end */
  makespanMs: number;
  /** the heaviest jobs' (weight 10) wait from being sent to their start call: mean and longest */
  heaviestMeanWaitMs: number;
  heaviestLongestWaitMs: number;
  /** median time from a run's end to the next run's start (units idle meanwhile), over the runs started after an end */
  endToStartMs?: number;
  /**
   * The same jobs through the admission rule alone (bench/weightsModel.ts): the units used while jobs wait with no gap
   * between a run's end and the next start, and with the gap measured here (`endToStartMs`) after every end.
   */
  model?: { noGap: number; atGap: number };
}

export interface WeightsResult {
  budget: number;
  jobs: number;
  weights: number[];
  runLimitFactor: number;
  /** of the round with declared run limits (backfill) */
  maxUnitsInUse: number;
  unitUtilization: number;
  /** the same jobs without run limits (strict order), then with them (backfill), one after the other */
  strictOrder: WeightsRound;
  backfill: WeightsRound;
}

const WEIGHTS = [1, 2, 5, 10];

/** The weights goal: this share of the budget used while jobs wait, at least... */
export const WEIGHTS_UTILIZATION_GOAL = 0.9;

/** ...with the heaviest jobs waiting no longer than in strict order (the head never delayed). */
export function weightsGoalMet(w: WeightsResult): boolean {
  return w.unitUtilization >= WEIGHTS_UTILIZATION_GOAL && w.backfill.heaviestLongestWaitMs <= w.strictOrder.heaviestLongestWaitMs;
}

/**
 * The same jobs twice, one round after the other on pools of their own: first without run limits (strict order: a
 * heavy job at the head keeps lighter ones behind it waiting), then each declaring one (backfill may let a lighter
 * job ahead when it ends before the head could start anyway).
 */
export async function runWeights(h: Harness, p: WeightsParams): Promise<WeightsResult> {
  const strictOrder = await weightsRound(h, p, p.pool, undefined);
  const backfill = await weightsRound(h, p, weightsBackfillPool(p.pool), p.runLimitFactor);
  return {
    budget: p.budget,
    jobs: p.jobs,
    weights: WEIGHTS,
    runLimitFactor: p.runLimitFactor,
    maxUnitsInUse: backfill.maxUnitsInUse,
    unitUtilization: backfill.unitUtilization,
    strictOrder,
    backfill,
  };
}

/** The pool of the round with run limits. */
export const weightsBackfillPool = (pool: string): string => `${pool}-bf`;

async function weightsRound(h: Harness, p: WeightsParams, pool: string, runLimitFactor: number | undefined): Promise<WeightsRound> {
  const random = seededRandom(p.seed);
  const durations = logNormalRunTimes(p.jobs, p.runTimes, p.seed + 1);
  const weightOf = new Map<string, number>();
  const jobs = makeJobs({ group: pool, pool, durations, tag: 'w', glueEvery: 0 }).map((job) => {
    const weight = WEIGHTS[Math.floor(random() * WEIGHTS.length)]!;
    weightOf.set(job.name, weight);
    const runSeconds = runLimitFactor === undefined ? undefined : Math.ceil(job.durationMs * runLimitFactor) / 1000;
    return { ...job, spec: { ...job.spec, weight, ...(runSeconds !== undefined && { runSeconds }) } as JobSpec };
  });
  const sentAt = Date.now();
  await h.enqueue(jobs);
  await h.waitEnded(pool, p.jobs, pool, p.timeoutMs);
  await h.settle(pool);
  const runs = h.runsOf(pool);
  const { max, utilization } = unitsOverTime(runs, (run) => weightOf.get(run.name) ?? 1, p.budget);
  const heaviest = runs.filter((run) => weightOf.get(run.name) === Math.max(...WEIGHTS)).map((run) => run.startCallAt - sentAt);
  const firstStart = Math.min(...runs.map((run) => run.startCallAt));
  const lastEnd = Math.max(...runs.map((run) => run.endedAt ?? run.startedAt));
  const endToStartMs = endToStart(runs);
  const modelJobs: ModelJob[] = jobs.map((job) => {
    const limit = runLimitMsOf(job.spec as { runSeconds?: number });
    return { units: weightOf.get(job.name)!, runMs: job.durationMs, ...(limit !== undefined && { runLimitMs: limit }) };
  });
  const modelled = (gapMs: number) => unitsOverTime(modelRuns(modelJobs, p.budget, gapMs), (run) => modelJobs[run.job]!.units, p.budget).utilization;
  return {
    maxUnitsInUse: max,
    unitUtilization: utilization,
    makespanMs: Math.round(lastEnd - firstStart),
    heaviestMeanWaitMs: Math.round(heaviest.reduce((sum, wait) => sum + wait, 0) / Math.max(1, heaviest.length)),
    heaviestLongestWaitMs: Math.round(Math.max(0, ...heaviest)),
    endToStartMs,
    model: { noGap: modelled(0), atGap: modelled(endToStartMs) },
  };
}

/**
 * How long units given back idle before a start uses them again: for each run started after some run ended, the time
 * from the last end before its start to its start; the median of those. Runs started before any end (the first wave)
 * do not count.
 */
export function endToStart(runs: readonly RunSpan[]): number {
  const ends = runs.flatMap((run) => (run.endedAt === undefined ? [] : [run.endedAt])).sort((a, b) => a - b);
  const gaps: number[] = [];
  for (const run of runs) {
    let lo = 0;
    let hi = ends.length;
    // the last end at or before this start
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (ends[mid]! <= run.startedAt) lo = mid + 1;
      else hi = mid;
    }
    if (lo > 0) gaps.push(run.startedAt - ends[lo - 1]!);
  }
  return Math.round(percentile(gaps.sort((a, b) => a - b), 50));
}

/** The most units in progress at once, and the time-weighted mean over the budget from the first to the last start. */
export function unitsOverTime<R extends RunSpan>(runs: readonly R[], units: (run: R) => number, budget: number): { max: number; utilization: number } {
  const events = runChanges(runs, units);
  const from = Math.min(...runs.map((run) => run.startedAt));
  const to = Math.max(...runs.map((run) => run.startedAt));
  let inUse = 0;
  let max = 0;
  let area = 0;
  let last = from;
  for (const event of events) {
    const at = Math.min(Math.max(event.at, from), to);
    area += inUse * (at - last);
    last = at;
    inUse += event.delta;
    max = Math.max(max, inUse);
  }
  return { max, utilization: to > from ? area / ((to - from) * budget) : 1 };
}

function isOf(run: SimRun, tag: string): boolean {
  return run.name.includes(`-${tag}-`);
}

function startsOf(h: Harness, group: string, tag: string): SimRun[] {
  return h.runsOf(group).filter((run) => isOf(run, tag));
}

export interface RateParams {
  pool: string;
  limit: number;
  startsPerSecond: number;
  jobs: number;
  runMs: number;
  timeoutMs: number;
}

export interface RateResult {
  startsPerSecond: number;
  limit: number;
  jobs: number;
  /** the most start calls the simulator saw in any window of 1 s (anchored at each start) */
  maxStartsInAnySecond: number;
  /** starts over what the rate allows from the first start call to the last: (n - 1) / (span x rate) */
  rateUtilization: number;
  /** starts made over the starts the rate allows over the same span: n / (floor(rate x span) + 1) */
  startsOfAllowed: number;
  /** the smallest gap between two start calls, ms */
  minGapMs: number;
  /** writes to the limit's counter item per start (transactions and plain writes, refused ones included) */
  counterWritesPerStart: number;
  /** of those, refused (a lost `tat` fence, a conflict, a failed condition) per start */
  failedWritesPerStart: number;
  /** DynamoDB requests per job (every item, reads included) */
  dynamodbPerJob: number;
}

/** A start rate with slots to spare: every job sent at once, the start calls read from the simulator. */
export async function runRateLimit(h: Harness, p: RateParams): Promise<RateResult> {
  await h.leases.setLimit(p.pool, p.limit);
  await h.poolAdmin().setRate(p.pool, p.startsPerSecond);
  const jobs = makeJobs({ group: p.pool, pool: p.pool, durations: Array.from({ length: p.jobs }, () => p.runMs), tag: 'r', glueEvery: 0 });
  const traffic0 = { itemWrites: 0, failedItemWrites: 0, ...h.tracer.partitions.get(p.pool) };
  const before = h.snapshot();
  await h.enqueue(jobs);
  await h.waitEnded(p.pool, p.jobs, p.pool, p.timeoutMs);
  await h.settle(p.pool);
  const traffic = { itemWrites: 0, failedItemWrites: 0, ...h.tracer.partitions.get(p.pool) };
  const requests = perJob(before, h.snapshot(), p.jobs);
  const starts = h
    .runsOf(p.pool)
    .map((run) => run.startCallAt)
    .sort((a, b) => a - b);
  let max = 0;
  let minGap = Number.POSITIVE_INFINITY;
  for (let i = 0; i < starts.length; i++) {
    let j = i;
    while (j < starts.length && starts[j]! < starts[i]! + 1000) j++;
    max = Math.max(max, j - i);
    if (i > 0) minGap = Math.min(minGap, starts[i]! - starts[i - 1]!);
  }
  const spanSeconds = (starts[starts.length - 1]! - starts[0]!) / 1000;
  const r3 = (x: number) => Math.round(x * 1000) / 1000;
  return {
    startsPerSecond: p.startsPerSecond,
    limit: p.limit,
    jobs: p.jobs,
    maxStartsInAnySecond: max,
    rateUtilization: spanSeconds > 0 ? r3((starts.length - 1) / (spanSeconds * p.startsPerSecond)) : 1,
    startsOfAllowed: r3(starts.length / (Math.floor(spanSeconds * p.startsPerSecond) + 1)),
    minGapMs: Math.round(minGap),
    counterWritesPerStart: r3((traffic.itemWrites - traffic0.itemWrites) / starts.length),
    failedWritesPerStart: r3((traffic.failedItemWrites - traffic0.failedItemWrites) / starts.length),
    dynamodbPerJob: requests.dynamodb,
  };
}
