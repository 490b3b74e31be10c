import { type Metrics as PowertoolsMetrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { SluiceDeps } from '../../app/deps';
import { POOL_DIMENSION } from './emfMetrics';

/** Gauges of every pool, written once per reconciler run (the dashboard and the `lease-past-deadline` alarm read them). */
export const GaugeName = {
  SlotsInUse: 'SlotsInUse',
  SlotLimit: 'SlotLimit',
  Waiting: 'Waiting',
  /** Slots held longer than their kind may run (plus the start and reservation grace): a lease nobody will free. */
  OverdueLeases: 'OverdueLeases',
} as const;
export type GaugeName = (typeof GaugeName)[keyof typeof GaugeName];

export interface PoolGauge {
  pool: string;
  limit: number;
  inUse: number;
  waiting: number;
  /** job ids holding a slot past its deadline */
  overdue: string[];
}

/**
 * Reads each pool's slots and waiting jobs (one GetItem and a COUNT query a pool). A slot's deadline is when it was
 * taken plus its kind's maximum run time plus both grace periods: by then the reconciler has freed the slot of any run
 * that ended or overran, so a slot still held is stuck (its job is in `starting` with its message gone to the DLQ, or
 * the job API keeps failing for it). Read after the reconciler's run, a non-zero count means exactly that.
 */
export async function readPoolGauges(deps: Pick<SluiceDeps, 'leases' | 'clock' | 'settings'>): Promise<PoolGauge[]> {
  const { leases, clock, settings } = deps;
  const gauges: PoolGauge[] = [];
  for (const pool of await leases.listPools()) {
    const snapshot = await leases.getPool(pool);
    if (!snapshot) continue;
    const now = clock.now();
    const overdue = Object.entries(snapshot.holders)
      .filter(([, holder]) => now - holder.since > settings.maxRunMs[holder.kind] + settings.startGraceMs + settings.reservationGraceMs)
      .map(([jobId]) => jobId);
    gauges.push({ pool, limit: snapshot.limit, inUse: snapshot.inUse, waiting: await leases.countWaiters(pool), overdue });
  }
  return gauges;
}

/**
 * One EMF line per pool (dimensions service, pool) and one with the totals (dimension service), so an alarm can watch
 * the service without knowing the pools' names.
 */
export function publishPoolGauges(metrics: PowertoolsMetrics, gauges: readonly PoolGauge[]): void {
  // Buffered on the instance and flushed per line: a singleMetric() would print one line per metric.
  const publish = (values: { inUse: number; limit: number; waiting: number; overdue: number }, pool?: string) => {
    if (pool) metrics.addDimension(POOL_DIMENSION, pool);
    metrics.addMetric(GaugeName.SlotsInUse, MetricUnit.Count, values.inUse);
    metrics.addMetric(GaugeName.SlotLimit, MetricUnit.Count, values.limit);
    metrics.addMetric(GaugeName.Waiting, MetricUnit.Count, values.waiting);
    metrics.addMetric(GaugeName.OverdueLeases, MetricUnit.Count, values.overdue);
    metrics.publishStoredMetrics();
  };
  const totals = { inUse: 0, limit: 0, waiting: 0, overdue: 0 };
  for (const g of gauges) {
    const values = { inUse: g.inUse, limit: g.limit, waiting: g.waiting, overdue: g.overdue.length };
    publish(values, g.pool);
    totals.inUse += values.inUse;
    totals.limit += values.limit;
    totals.waiting += values.waiting;
    totals.overdue += values.overdue;
  }
  // Written every run, zeros included: the alarm sees a stuck lease freed, not merely its data stop.
  publish(totals);
}

/** Reads and publishes the gauges; the reconciler's handler calls it after each run (README, "Operate"). */
export async function emitPoolGauges(
  deps: Pick<SluiceDeps, 'leases' | 'clock' | 'settings'>,
  metrics: PowertoolsMetrics,
): Promise<PoolGauge[]> {
  const gauges = await readPoolGauges(deps);
  publishPoolGauges(metrics, gauges);
  return gauges;
}
