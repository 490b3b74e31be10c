import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import type { SimRun } from '../local/simulators';
import { percentile } from '../local/summary';

export { percentile };

/** The Sluice job id a run was started for, as its kind's simulator reads it (client token, argument, execution name). */
export { jobIdOfRun } from '../local/simulators/simulatedKinds';

export interface Distribution {
  n: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  meanMs: number;
}

const round1 = (x: number) => Math.round(x * 10) / 10;

export function distribution(values: readonly number[]): Distribution {
  const sorted = [...values].sort((a, b) => a - b);
  const mean = sorted.length ? sorted.reduce((s, x) => s + x, 0) / sorted.length : 0;
  return {
    n: sorted.length,
    p50Ms: round1(percentile(sorted, 50)),
    p99Ms: round1(percentile(sorted, 99)),
    maxMs: round1(percentile(sorted, 100)),
    meanMs: round1(mean),
  };
}

export const median = (values: readonly number[]): number =>
  percentile(
    [...values].sort((a, b) => a - b),
    50,
  );

/**
 * Makespan of the ideal schedule: `limit` slots, jobs in order, each starting the moment a slot frees, no latency.
 * (Greedy list scheduling in arrival order, which is what a zero-latency FIFO gate does.)
 */
export function idealFifoMakespan(durations: readonly number[], limit: number): number {
  if (limit <= 0 || durations.length === 0) return 0;
  const freeAt = Array.from({ length: Math.min(limit, durations.length) }, () => 0);
  for (const d of durations) {
    let slot = 0;
    for (let i = 1; i < freeAt.length; i++) if (freeAt[i]! < freeAt[slot]!) slot = i;
    freeAt[slot] = freeAt[slot]! + d;
  }
  return Math.max(...freeAt);
}

export interface ScheduleStats {
  jobs: number;
  /** First start call to the last run's end, ms. */
  makespanMs: number;
  /** Sum of run times, ms. */
  busyMs: number;
  /** busy / (limit x makespan) */
  utilization: number;
  maxConcurrency: number;
}

/** Utilization as summary.ts defines it: busy slot-time over limit x makespan, makespan from the first start call. */
export function scheduleStats(runs: readonly SimRun[], limit: number): ScheduleStats {
  const ended = runs.filter((r) => r.endedAt !== undefined);
  if (ended.length === 0) return { jobs: 0, makespanMs: 0, busyMs: 0, utilization: 0, maxConcurrency: 0 };
  const first = Math.min(...ended.map((r) => r.startCallAt));
  const last = Math.max(...ended.map((r) => r.endedAt!));
  const busyMs = ended.reduce((sum, r) => sum + (r.endedAt! - r.startedAt), 0);
  const makespanMs = last - first;
  return {
    jobs: ended.length,
    makespanMs,
    busyMs,
    utilization: makespanMs > 0 ? busyMs / (limit * makespanMs) : 0,
    maxConcurrency: maxInProgress(ended),
  };
}

function maxInProgress(runs: readonly SimRun[]): number {
  const changes = runs.flatMap((r) => [
    { t: r.startedAt, d: 1 },
    { t: r.endedAt!, d: -1 },
  ]);
  changes.sort((a, b) => a.t - b.t || a.d - b.d); // an end and a start at the same ms: the end first
  let now = 0;
  let max = 0;
  for (const c of changes) {
    now += c.d;
    max = Math.max(max, now);
  }
  return max;
}

/** What of a run says when it was in progress (a simulator's record, or a model's). */
export type RunSpan = Pick<SimRun, 'startedAt' | 'endedAt' | 'startSeq' | 'endSeq'>;

/**
 * Every start and end of the runs as a change of what is in progress (`units` of each run, one by default), in the
 * order they happened (the simulator's sequence breaks ties between equal times).
 */
export function runChanges<R extends RunSpan>(runs: readonly R[], units: (run: R) => number = () => 1): Array<{ at: number; seq: number; delta: number }> {
  return runs
    .flatMap((run) => [
      { at: run.startedAt, seq: run.startSeq, delta: units(run) },
      ...(run.endedAt === undefined ? [] : [{ at: run.endedAt, seq: run.endSeq ?? 0, delta: -units(run) }]),
    ])
    .sort((a, b) => a.at - b.at || a.seq - b.seq);
}

/** Runs in progress over time, relative to `t0`, as steps (one point per change). */
export function stepTimeline(runs: readonly SimRun[], t0: number): Array<{ t: number; n: number }> {
  const changes = runs.flatMap((r) => [{ t: r.startedAt - t0, d: 1 }, ...(r.endedAt !== undefined ? [{ t: r.endedAt - t0, d: -1 }] : [])]);
  changes.sort((a, b) => a.t - b.t || a.d - b.d);
  const out: Array<{ t: number; n: number }> = [{ t: 0, n: 0 }];
  let n = 0;
  for (const c of changes) {
    n += c.d;
    const last = out[out.length - 1]!;
    if (last.t === c.t) last.n = n;
    else out.push({ t: c.t, n });
  }
  return out;
}

/**
 * The bench process over a stretch of time: CPU in cores (every thread: the main one, libuv's pool, the GC's helpers),
 * the main thread's event-loop utilization (the share of the time it was running code rather than waiting for I/O; 1:
 * saturated, every callback waits its turn), and how late the event loop ran a timer.
 */
export interface ProcessLoad {
  cpuCores: number;
  /** The emulators' process (fauxqs and dynalite share one event loop), when they run in a child. */
  emulatorCpuCores?: number;
  eventLoopUtilization: number;
  eventLoopDelayP50Ms: number;
  eventLoopDelayP99Ms: number;
}

/** utime + stime of a process, in ms (Linux /proc; undefined elsewhere). */
export function processCpuMs(pid: number): number | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // USER_HZ is 100 on Linux
  } catch {
    return undefined;
  }
}

/** Starts watching the bench process (and the emulators' when given); the returned function stops and reports. */
export function watchProcess(emulatorPid?: number): () => ProcessLoad {
  const child0 = emulatorPid ? processCpuMs(emulatorPid) : undefined;
  const cpu0 = process.cpuUsage();
  const elu0 = performance.eventLoopUtilization();
  const wall0 = performance.now();
  const resolutionMs = 10;
  const delay = monitorEventLoopDelay({ resolution: resolutionMs });
  delay.enable();
  return () => {
    delay.disable();
    const cpu = process.cpuUsage(cpu0);
    const child1 = emulatorPid ? processCpuMs(emulatorPid) : undefined;
    const wallMs = performance.now() - wall0;
    const r2 = (x: number) => Math.round(x * 100) / 100;
    // The histogram records each whole timer interval: the delay is what exceeds the resolution.
    const ms = (ns: number) => Math.max(0, Math.round((ns / 1e6 - resolutionMs) * 10) / 10);
    return {
      cpuCores: r2((cpu.user + cpu.system) / 1000 / wallMs),
      ...(child0 !== undefined && child1 !== undefined ? { emulatorCpuCores: r2((child1 - child0) / wallMs) } : {}),
      eventLoopUtilization: r2(performance.eventLoopUtilization(elu0).utilization),
      eventLoopDelayP50Ms: ms(delay.percentile(50)),
      eventLoopDelayP99Ms: ms(delay.percentile(99)),
    };
  };
}
