import { UNLIMITED_COUNTER_LIMIT, uncountedHolderKeys } from '../../domain/unlimited';
import { type Metrics as PowertoolsMetrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { SluiceDeps } from '../../app/deps';
import { allHolders } from '../../app/holders';
import { type GateWait, gateWait, summarizeWaits, WaitCause } from '../../domain/stuckPools';
import { eligibleSinceOf } from '../../domain/waiting';
import { POOL_DIMENSION } from './emfMetrics';
import type { JobKind } from '../../kinds/registry';

type GaugeDeps = Pick<SluiceDeps, 'leases' | 'clock' | 'settings'>;

/**
 * Gauges of every pool, written once per reconciler run (the dashboard and the `lease-past-deadline` and `pool-stuck`
 * alarms read them).
 */
export const GaugeName = {
  SlotsInUse: 'SlotsInUse',
  SlotLimit: 'SlotLimit',
  Waiting: 'Waiting',
  /** Slots held longer than their kind may run plus the retry budget and both graces: a lease nobody will free. */
  OverdueLeases: 'OverdueLeases',
  /** How long the job first in line has waited, seconds (shared/domain/stuckPools.ts); for the service, the longest. */
  OldestWaitSeconds: 'OldestWaitSeconds',
  /** 1 for a pool paused (limit 0) with jobs waiting; for the service, how many. */
  PausedPools: 'PausedPools',
} as const;
export type GaugeName = (typeof GaugeName)[keyof typeof GaugeName];

export interface PoolGauge {
  pool: string;
  limit: number;
  inUse: number;
  waiting: number;
  /** job ids holding a slot past its deadline */
  overdue: string[];
  /** why and how long its jobs wait (shared/domain/stuckPools.ts); undefined when none does */
  wait?: GateWait;
}

/**
 * Reads each pool's slots and waiting jobs (a GetItem, pages of the holders index and a COUNT query a pool). A slot's
 * deadline is when it was taken plus its kind's maximum run time, the retry budget and both grace periods: by then a
 * slot still held is either a run past its maximum that goes on (it keeps its slot: the reconciler also counts it in
 * OverdueRuns and names it in its log) or stuck: the reconciler keeps failing on its job.
 */
export async function readPoolGauges(deps: GaugeDeps): Promise<PoolGauge[]> {
  const { leases, clock, settings } = deps;
  const gauges: PoolGauge[] = [];
  for (const pool of await leases.listPools()) {
    const snapshot = await leases.getPool(pool);
    if (!snapshot) continue;
    // A slot may be kept through the whole retry budget (a start of unknown outcome), then for the longest run.
    const deadline = (kind: JobKind) =>
      settings.maxRunMs[kind] + settings.backoff.retryForSeconds * 1000 + settings.startGraceMs + settings.reservationGraceMs;
    // An unlimited pool (its counter never full): its uncounted slots are listed under its shards and move no counter,
    // so its slots in use are its holders, and it reports no limit (a limit of a billion would swamp the totals).
    const unlimited = snapshot.limit >= UNLIMITED_COUNTER_LIMIT;
    const holders = unlimited
      ? (await Promise.all([pool, ...uncountedHolderKeys(pool)].map((key) => allHolders(leases, key)))).flat()
      : await allHolders(leases, pool);
    const overdue = holders.filter((holder) => clock.now() - holder.since > deadline(holder.kind)).map((holder) => holder.jobId);
    const waiting = await leases.countWaiters(pool);
    // The first in line only (one item): how long it waited says whether anything is let in.
    const [first] = waiting > 0 ? await leases.oldestWaiters(pool, 1) : [];
    const wait = gateWait(
      {
        gate: pool,
        limit: snapshot.limit,
        inUse: snapshot.inUse,
        waiting,
        firstInLineSince: first && (eligibleSinceOf(first.waitKey) ?? first.since),
      },
      clock.now(),
    );
    gauges.push({
      pool,
      limit: unlimited ? 0 : snapshot.limit,
      inUse: unlimited ? holders.length : snapshot.inUse,
      waiting,
      overdue,
      ...(wait && { wait }),
    });
  }
  return gauges;
}

/**
 * One EMF line per pool (dimensions service, pool) and one with the totals (dimension service), so an alarm can watch
 * the service without knowing the pools' names.
 */
export function publishPoolGauges(metrics: PowertoolsMetrics, gauges: readonly PoolGauge[]): void {
  // Buffered on the instance and flushed per line: a singleMetric() would print one line per metric.
  const publish = (
    values: { inUse: number; limit: number; waiting: number; overdue: number; waitSeconds: number; paused: number },
    pool?: string,
  ) => {
    if (pool) metrics.addDimension(POOL_DIMENSION, pool);
    metrics.addMetric(GaugeName.SlotsInUse, MetricUnit.Count, values.inUse);
    metrics.addMetric(GaugeName.SlotLimit, MetricUnit.Count, values.limit);
    metrics.addMetric(GaugeName.Waiting, MetricUnit.Count, values.waiting);
    metrics.addMetric(GaugeName.OverdueLeases, MetricUnit.Count, values.overdue);
    metrics.addMetric(GaugeName.OldestWaitSeconds, MetricUnit.Seconds, values.waitSeconds);
    metrics.addMetric(GaugeName.PausedPools, MetricUnit.Count, values.paused);
    metrics.publishStoredMetrics();
  };
  const totals = { inUse: 0, limit: 0, waiting: 0, overdue: 0 };
  for (const g of gauges) {
    const values = { inUse: g.inUse, limit: g.limit, waiting: g.waiting, overdue: g.overdue.length };
    publish({ ...values, waitSeconds: g.wait?.waitSeconds ?? 0, paused: g.wait?.cause === WaitCause.Paused ? 1 : 0 }, g.pool);
    totals.inUse += values.inUse;
    totals.limit += values.limit;
    totals.waiting += values.waiting;
    totals.overdue += values.overdue;
  }
  // The service's line is what the alarms read: the longest wait of any pool, how many are paused with jobs waiting.
  const { oldestWaitSeconds, pausedWithWaiting } = summarizeWaits(gauges.map((g) => g.wait));
  // Written every run, zeros included: the alarm sees a stuck lease freed, not merely its data stop.
  publish({ ...totals, waitSeconds: oldestWaitSeconds, paused: pausedWithWaiting });
}

/** Reads and publishes the gauges; the reconciler's handler calls it after each run (README, "Operate"). */
export async function emitPoolGauges(deps: GaugeDeps, metrics: PowertoolsMetrics): Promise<PoolGauge[]> {
  const gauges = await readPoolGauges(deps);
  publishPoolGauges(metrics, gauges);
  return gauges;
}
