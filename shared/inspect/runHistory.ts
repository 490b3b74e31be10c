import { HOLDING_STATES, JobState } from '../domain/jobState';

/**
 * What the job records say of the last day, per pool: runs in progress over time, how many ended well or not, how long
 * they ran. Pure (the records and `now` in): derived from the records of the jobs holding a slot and of those on the
 * `ended` index (startedAt, endedAt, state: readJobsView), so the dashboard shows the night however long it was closed,
 * and keeps no store of its own.
 */

/** The fields of a job record the history is made of. */
export interface RunTimes {
  pool: string;
  state: string;
  /** when its run was recorded (protocol step `started`) */
  startedAt?: number;
  /** when its run's end was recorded */
  endedAt?: number;
  updatedAt: number;
  deadLetteredAt?: number;
}

export const HISTORY_WINDOW_MS = 24 * 3600_000;
/** 288 buckets of 5 minutes: about as many as the chart has pixels to spare. */
export const HISTORY_BUCKETS = 288;

/** The windows a view offers: the day (what the night did), and closer looks at the last hours. */
export const HISTORY_WINDOWS = {
  '24h': { windowMs: HISTORY_WINDOW_MS, buckets: HISTORY_BUCKETS },
  '6h': { windowMs: 6 * 3600_000, buckets: 288 },
  '1h': { windowMs: 3600_000, buckets: 240 },
} as const;
export type HistoryWindow = keyof typeof HISTORY_WINDOWS;

/** The history of each window, from one set of records. */
export function runHistories(jobs: readonly RunTimes[], now: number, pools: readonly string[]): Record<HistoryWindow, RunHistory> {
  const windows = Object.entries(HISTORY_WINDOWS) as Array<[HistoryWindow, (typeof HISTORY_WINDOWS)[HistoryWindow]]>;
  return Object.fromEntries(windows.map(([name, window]) => [name, runHistory(jobs, now, { ...window, pools })])) as Record<
    HistoryWindow,
    RunHistory
  >;
}

/** Upper bounds (ms) of the duration histogram's bins; the last bin has none. */
export const DURATION_BINS_MS = [60_000, 5 * 60_000, 15 * 60_000, 3600_000, 3 * 3600_000, 12 * 3600_000] as const;

export interface Durations {
  count: number;
  p50: number;
  p90: number;
  max: number;
  /** runs per bin of DURATION_BINS_MS (one more: longer than the last bound) */
  bins: number[];
}

export interface PoolHistory {
  pool: string;
  /** the most runs in progress at once in each bucket of the window, oldest first (a run counts once, whatever its weight) */
  inProgress: number[];
  /** runs that ended in the window, by outcome (dead: dead-lettered in the window) */
  succeeded: number;
  failed: number;
  dead: number;
  /** how long the runs that ended in the window (succeeded or failed) ran; undefined when none did */
  durations?: Durations;
}

export interface RunHistory {
  from: number;
  to: number;
  bucketMs: number;
  pools: PoolHistory[];
}

/** Whether a record can count in the history of the window ending at `now` (readJobsView keeps only these). */
export function inWindow(job: RunTimes, now: number, windowMs = HISTORY_WINDOW_MS): boolean {
  const interval = runInterval(job, now);
  if (interval && interval.end > now - windowMs) return true;
  return (
    endedAt(job) >= now - windowMs && (job.state === JobState.Succeeded || job.state === JobState.Failed || job.state === JobState.Dead)
  );
}

export function runHistory(
  jobs: readonly RunTimes[],
  now: number,
  options: { windowMs?: number; buckets?: number; pools?: readonly string[] } = {},
): RunHistory {
  const windowMs = options.windowMs ?? HISTORY_WINDOW_MS;
  const buckets = options.buckets ?? HISTORY_BUCKETS;
  const from = now - windowMs;
  const bucketMs = windowMs / buckets;
  const byPool = new Map<string, RunTimes[]>();
  for (const name of options.pools ?? []) byPool.set(name, []);
  for (const job of jobs) byPool.set(job.pool, [...(byPool.get(job.pool) ?? []), job]);
  const pools = [...byPool.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([pool, ofPool]): PoolHistory => {
      const ended = ofPool.filter((job) => endedAt(job) >= from && endedAt(job) <= now);
      const runs = ended.filter((job) => job.state === JobState.Succeeded || job.state === JobState.Failed);
      const durations = runs.filter((job) => job.startedAt !== undefined).map((job) => Math.max(0, endedAt(job) - job.startedAt!));
      return {
        pool,
        inProgress: inProgress(ofPool, now, from, bucketMs, buckets),
        succeeded: runs.filter((job) => job.state === JobState.Succeeded).length,
        failed: runs.filter((job) => job.state === JobState.Failed).length,
        dead: ended.filter((job) => job.state === JobState.Dead).length,
        ...(durations.length > 0 && { durations: durationsOf(durations) }),
      };
    });
  return { from, to: now, bucketMs, pools };
}

/** When a finished job ended: its run's end, else when it was dead-lettered, else its last change. */
function endedAt(job: RunTimes): number {
  return job.endedAt ?? job.deadLetteredAt ?? job.updatedAt;
}

/**
 * The time its run held a slot, as far as the record tells: from the run's start to its end; to now while the job
 * holds its slot; to its last change for a job that went back to waiting (a run that never started).
 */
function runInterval(job: RunTimes, now: number): { start: number; end: number } | undefined {
  if (job.startedAt === undefined) return undefined;
  const holding = (HOLDING_STATES as readonly string[]).includes(job.state);
  const end = holding ? now : Math.min(now, endedAt(job));
  return end > job.startedAt ? { start: job.startedAt, end } : undefined;
}

/** A sweep over the runs' starts and ends: the most in progress at once in each bucket. */
function inProgress(jobs: readonly RunTimes[], now: number, from: number, bucketMs: number, buckets: number): number[] {
  const events: Array<{ at: number; delta: number }> = [];
  for (const job of jobs) {
    const interval = runInterval(job, now);
    if (!interval || interval.end <= from || interval.start > now) continue;
    events.push({ at: Math.max(from, interval.start), delta: 1 });
    // A run still going has no end in the window: it is counted to the last bucket.
    if (interval.end < now) events.push({ at: interval.end, delta: -1 });
  }
  // At one instant ends come first: a slot handed from an ending run to a starting one is never counted twice.
  events.sort((a, b) => a.at - b.at || a.delta - b.delta);
  const most: number[] = [];
  let current = 0;
  let next = 0;
  for (let i = 0; i < buckets; i++) {
    const start = from + i * bucketMs;
    const end = start + bucketMs;
    while (next < events.length && events[next]!.at <= start) current += events[next++]!.delta;
    let peak = current;
    while (next < events.length && events[next]!.at < end) {
      current += events[next++]!.delta;
      peak = Math.max(peak, current);
    }
    most.push(peak);
  }
  return most;
}

function durationsOf(values: number[]): Durations {
  const sorted = [...values].sort((a, b) => a - b);
  // Nearest rank: the smallest value with at least p of the values at or under it.
  const rank = (p: number) => sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)]!;
  const bins = Array<number>(DURATION_BINS_MS.length + 1).fill(0);
  for (const value of sorted) {
    const bin = DURATION_BINS_MS.findIndex((bound) => value < bound);
    bins[bin === -1 ? DURATION_BINS_MS.length : bin]!++;
  }
  return { count: sorted.length, p50: rank(0.5), p90: rank(0.9), max: sorted[sorted.length - 1]!, bins };
}
