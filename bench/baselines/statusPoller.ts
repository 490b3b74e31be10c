import type { BenchJob } from '../workload';
import { SimJobApi, sleep, type StartedRun } from './jobApi';

export interface StatusPollerReport {
  polls: number;
  statusCalls: number;
  starts: number;
}

/**
 * The Step Functions polling scheduler: start the first `limit` jobs; then, every `pollMs`, ask each running job's
 * status API (GetJobRun / DescribeFlowExecutionRecords) and start as many waiting jobs as slots were freed. A freed
 * slot idles until the next poll. Returns when every job has been seen finished.
 */
export async function runStatusPoller(
  api: SimJobApi,
  jobs: readonly BenchJob[],
  limit: number,
  pollMs: number,
): Promise<StatusPollerReport> {
  const report: StatusPollerReport = { polls: 0, statusCalls: 0, starts: 0 };
  let next = 0;
  let running: StartedRun[] = [];
  const fill = async () => {
    const batch = jobs.slice(next, next + Math.max(0, limit - running.length));
    next += batch.length;
    report.starts += batch.length;
    running.push(...(await Promise.all(batch.map((job) => api.start(job)))));
  };
  await fill();
  while (running.length > 0) {
    await sleep(pollMs);
    report.polls++;
    report.statusCalls += running.length;
    const still = await Promise.all(running.map((run) => api.isRunning(run)));
    running = running.filter((_, i) => still[i]);
    await fill();
  }
  return report;
}
