import type { JobSpec } from '../domain/job';
import { logNormal, seededRandom } from './random';

export interface WorkloadOptions {
  jobs: number;
  seed: number;
  /** median run time, ms (real runs of ~20 minutes compressed to seconds) */
  medianMs: number;
  /** log-normal shape: 0.6 gives a long tail, like real data jobs */
  sigma: number;
  minMs: number;
  maxMs: number;
  pool: string;
  /** share of Glue jobs; the rest are AppFlow flows */
  glueShare: number;
}

export const DEFAULT_WORKLOAD: WorkloadOptions = {
  jobs: 60,
  seed: 42,
  medianMs: 2500,
  sigma: 0.6,
  minMs: 400,
  maxMs: 12_000,
  pool: 'default',
  glueShare: 0.4,
};

export interface Workload {
  specs: JobSpec[];
  /** run time of each job by flow / job name (each job has its own name, so the simulator can look it up) */
  durations: Map<string, number>;
}

/** A reproducible mix of AppFlow and Glue jobs with log-normal run times. */
export function makeWorkload(options: WorkloadOptions): Workload {
  const random = seededRandom(options.seed);
  const specs: JobSpec[] = [];
  const durations = new Map<string, number>();
  const runTag = options.seed.toString(36);
  for (let i = 0; i < options.jobs; i++) {
    const duration = Math.round(Math.min(options.maxMs, Math.max(options.minMs, logNormal(random, options.medianMs, options.sigma))));
    const n = String(i).padStart(4, '0');
    const id = `sample-${runTag}-${n}`;
    if (random() < options.glueShare) {
      const jobName = `sample-glue-${runTag}-${n}`;
      specs.push({ kind: 'glue', id, pool: options.pool, jobName, arguments: { '--day': '2026-11-22' } });
      durations.set(jobName, duration);
    } else {
      const flowName = `sample-flow-${runTag}-${n}`;
      specs.push({ kind: 'appflow', id, pool: options.pool, flowName });
      durations.set(flowName, duration);
    }
  }
  return { specs, durations };
}
