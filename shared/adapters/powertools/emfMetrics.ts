import { type Metrics as PowertoolsMetrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { MetricName, Metrics } from '../../app/deps';

/** The dimension that splits Sluice's metrics by pool (next to Powertools' own `service`). */
export const POOL_DIMENSION = 'pool';

/**
 * Counters and durations as CloudWatch EMF through Powertools, one log line each. A metric with a pool is published
 * twice from that one line: per pool (dimensions service, pool: the dashboard) and for the whole service (dimension
 * service only: what the alarms read, since an alarm cannot add up a metric over dimension values it does not know).
 */
export class EmfMetrics implements Metrics {
  constructor(private readonly metrics: PowertoolsMetrics) {}

  count(name: MetricName, value = 1, pool?: string): void {
    this.emit(name, MetricUnit.Count, value, pool);
  }

  /** A duration, e.g. `HandOffLatency` (see README, "Operate"). */
  milliseconds(name: MetricName, value: number, pool?: string): void {
    this.emit(name, MetricUnit.Milliseconds, value, pool);
  }

  private emit(name: string, unit: (typeof MetricUnit)[keyof typeof MetricUnit], value: number, pool?: string): void {
    const single = this.metrics.singleMetric();
    if (pool) {
      single.addDimension(POOL_DIMENSION, pool);
      single.addDimensions({}); // a second dimension set: the defaults (service) alone
    }
    single.addMetric(name, unit, value);
  }
}
