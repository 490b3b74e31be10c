import type { Distribution } from '../bench/metrics';
import type { SimRun } from './simulators';

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
  /** Hand-offs the releaser started itself (one hop), of `handoffs`. */
  oneHopHandoffs: number;
  /** Slot-seconds the pool ran below its limit while jobs waited (from the pool first full to the last start). */
  shortfallSlotSeconds: number;
  /** The same over the slot-time of that window. */
  shortfallShare: number;
  /** per kind: jobs run (runs seen by the simulator), succeeded and failed */
  byKind: Record<string, { jobs: number; succeeded: number; failed: number }>;
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
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

/**
 * `handoffs`: the hand-offs as the bench measures them (exact pairing by the releaser's pass transaction, see
 * bench/scenarios/handoff.ts); `shortfall`: as the bench's burst scenario measures it.
 */
export function summarize(input: {
  jobs: number;
  limit: number;
  runs: readonly SimRun[];
  handoffs: Distribution & { oneHop: number };
  shortfall: { slotSeconds: number; share: number };
  maxObservedConcurrency: number;
  deadLettered: number;
}): RunSummary {
  const { runs, limit, handoffs } = input;
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
    handoffP50Ms: handoffs.p50Ms,
    handoffP99Ms: handoffs.p99Ms,
    handoffMaxMs: handoffs.maxMs,
    handoffs: handoffs.n,
    oneHopHandoffs: handoffs.oneHop,
    shortfallSlotSeconds: input.shortfall.slotSeconds,
    shortfallShare: input.shortfall.share,
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
