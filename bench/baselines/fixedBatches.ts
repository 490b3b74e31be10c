import type { BenchJob } from '../workload';
import { SimJobApi, sleep, type StartedRun } from './jobApi';

export interface FixedBatchesReport {
  /** Scheduled invocations (EventBridge Scheduler -> a function that checks the last batch and starts the next). */
  ticks: number;
  /** Ticks that found the last batch still running and started nothing (else the limit would be broken). */
  skippedTicks: number;
  batches: number;
}

/**
 * The straw man of the Step Functions blog: batches of `limit` jobs started at fixed times. A tick every `intervalMs`
 * (what an operator picks: the expected longest run of a batch) asks the job APIs whether the last batch is done and,
 * if so, starts the next one. Returns once the last batch is started.
 */
export async function runFixedBatches(
  api: SimJobApi,
  jobs: readonly BenchJob[],
  limit: number,
  intervalMs: number,
): Promise<FixedBatchesReport> {
  const report: FixedBatchesReport = { ticks: 0, skippedTicks: 0, batches: 0 };
  const t0 = Date.now();
  let next = 0;
  let current: StartedRun[] = [];
  for (let tick = 0; next < jobs.length; tick++) {
    await sleep(t0 + tick * intervalMs - Date.now());
    report.ticks++;
    if (current.length > 0) {
      const running = await Promise.all(current.map((run) => api.isRunning(run)));
      if (running.some(Boolean)) {
        report.skippedTicks++;
        continue;
      }
    }
    const batch = jobs.slice(next, next + limit);
    next += batch.length;
    current = await Promise.all(batch.map((job) => api.start(job)));
    report.batches++;
  }
  return report;
}
