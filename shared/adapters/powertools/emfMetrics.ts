import { type Metrics as PowertoolsMetrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { MetricName, Metrics } from '../../app/deps';

/** Counters as CloudWatch EMF through Powertools; a per-pool dimension where the pool is known. */
export class EmfMetrics implements Metrics {
  constructor(private readonly metrics: PowertoolsMetrics) {}

  count(name: MetricName, value = 1, pool?: string): void {
    const single = this.metrics.singleMetric();
    if (pool) single.addDimension('pool', pool);
    single.addMetric(name, MetricUnit.Count, value);
  }
}
