import type { SimEmittedEvent, SimRun } from './simulators';

export interface RunSummary {
  jobs: number;
  succeeded: number;
  failed: number;
  deadLettered: number;
  limit: number;
  maxObservedConcurrency: number;
  makespanMs: number;
  utilization: number;
  handoffP50Ms: number;
  handoffP99Ms: number;
  handoffMaxMs: number;
  handoffs: number;
  /** per kind: jobs run (runs seen by the simulator), succeeded and failed */
  byKind: Record<string, { jobs: number; succeeded: number; failed: number }>;
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

/**
 * Hand-off latency: from a completion event reaching the bus to the start call of the job let in by it. With every job
 * queued up front and first-in-first-out hand-off, the i-th completion frees the slot of the (limit + i)-th start, so
 * the two are paired in time order (events closer together than the latency itself may swap partners).
 */
export function handOffLatencies(runs: readonly SimRun[], events: readonly SimEmittedEvent[], limit: number): number[] {
  const firstEvents = new Map<string, number>();
  for (const e of events) if (!firstEvents.has(e.executionId)) firstEvents.set(e.executionId, e.at);
  const ends = [...firstEvents.values()].sort((a, b) => a - b);
  const starts = runs.map((r) => r.startCallAt).sort((a, b) => a - b);
  const latencies: number[] = [];
  for (let i = 0; i + limit < starts.length && i < ends.length; i++) {
    const latency = starts[i + limit]! - ends[i]!;
    if (latency >= 0) latencies.push(latency);
  }
  return latencies.sort((a, b) => a - b);
}

/** Busy slot-time over limit x makespan, where the makespan runs from the first start call to the last run's end. */
export function utilizationOf(runs: readonly SimRun[], limit: number): { utilization: number; makespanMs: number } {
  const ended = runs.filter((r) => r.endedAt !== undefined);
  if (ended.length === 0 || limit === 0) return { utilization: 0, makespanMs: 0 };
  const first = Math.min(...ended.map((r) => r.startCallAt));
  const last = Math.max(...ended.map((r) => r.endedAt!));
  const busy = ended.reduce((sum, r) => sum + (r.endedAt! - r.startedAt), 0);
  const makespanMs = last - first;
  return { utilization: makespanMs > 0 ? busy / (limit * makespanMs) : 0, makespanMs };
}

export function summarize(input: {
  jobs: number;
  limit: number;
  runs: readonly SimRun[];
  events: readonly SimEmittedEvent[];
  maxObservedConcurrency: number;
  deadLettered: number;
}): RunSummary {
  const { runs, limit } = input;
  const latencies = handOffLatencies(runs, input.events, limit);
  const { utilization, makespanMs } = utilizationOf(runs, limit);
  return {
    jobs: input.jobs,
    succeeded: runs.filter((r) => r.outcome === 'succeeded').length,
    failed: runs.filter((r) => r.outcome !== undefined && r.outcome !== 'succeeded').length,
    deadLettered: input.deadLettered,
    limit,
    maxObservedConcurrency: input.maxObservedConcurrency,
    makespanMs,
    utilization: Number(utilization.toFixed(4)),
    handoffP50Ms: Math.round(percentile(latencies, 50) * 10) / 10,
    handoffP99Ms: Math.round(percentile(latencies, 99) * 10) / 10,
    handoffMaxMs: Math.round(percentile(latencies, 100) * 10) / 10,
    handoffs: latencies.length,
    byKind: byKindOf(runs),
  };
}

/** Runs, successes and failures per kind, in the order kinds first appear. */
export function byKindOf(runs: readonly SimRun[]): RunSummary['byKind'] {
  const out: RunSummary['byKind'] = {};
  for (const run of runs) {
    const row = (out[run.kind] ??= { jobs: 0, succeeded: 0, failed: 0 });
    row.jobs++;
    if (run.outcome === 'succeeded') row.succeeded++;
    else if (run.outcome !== undefined) row.failed++;
  }
  return out;
}
