import { conformanceOf } from '../shared/kinds/kindConformance';
import { type JobKind, KINDS, type JobSpec } from '../shared/kinds/registry';
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
  /** the kinds in the mix (default: every registered kind) */
  kinds: readonly JobKind[];
  /** share of Glue jobs when Glue is in the mix; the other kinds share the rest equally */
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
  kinds: KINDS.map((k) => k.kind),
  glueShare: 0.4,
};

/** Simulated runs are cut at this many medians by default (a log-normal of sigma 0.6 draws past it about once in 100 runs). */
export const MAX_MS_PER_MEDIAN = 4;

/** The longest simulated run unless --max-ms says: MAX_MS_PER_MEDIAN medians, at least the default workload's. */
export function defaultMaxMs(medianMs: number): number {
  return Math.max(DEFAULT_WORKLOAD.maxMs, MAX_MS_PER_MEDIAN * medianMs);
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/**
 * The simulated run times in one line, with the bounds draws are cut to (so a cut is never silent); when the median
 * itself is past the longest run, every run is cut, and the line says so.
 */
export function describeRunTimes(options: Pick<WorkloadOptions, 'medianMs' | 'sigma' | 'minMs' | 'maxMs'>): string {
  const line = `Simulated run times: log-normal, median ${seconds(options.medianMs)}, sigma ${options.sigma}, cut to ${seconds(options.minMs)}..${seconds(options.maxMs)} (--max-ms)`;
  if (options.medianMs > options.maxMs)
    return `${line}; the median is over the longest run: every run lasts ${seconds(options.maxMs)} (raise --max-ms)`;
  return line;
}

export interface Workload {
  specs: JobSpec[];
  /** run time of each job by flow / job / state machine name (each job has its own name, so the simulator can look it up) */
  durations: Map<string, number>;
}

/** Each kind's share of the jobs: Glue's is glueShare (all of them when alone), the others split the rest equally. */
export function kindShares(options: Pick<WorkloadOptions, 'kinds' | 'glueShare'>): Array<[JobKind, number]> {
  const others = options.kinds.filter((k) => k !== 'glue');
  const hasGlue = options.kinds.includes('glue');
  const glue = hasGlue ? (others.length === 0 ? 1 : options.glueShare) : 0;
  return options.kinds.map((k) => [k, k === 'glue' ? glue : (1 - glue) / others.length]);
}

/**
 * A reproducible mix of jobs of the chosen kinds with log-normal run times, each spec as its kind's conformance
 * fixture makes it (a flow, job or state machine of its own, named `sample-<kind>-<seed>-<n>`).
 */
export function makeWorkload(options: WorkloadOptions): Workload {
  const random = seededRandom(options.seed);
  const specs: JobSpec[] = [];
  const durations = new Map<string, number>();
  const runTag = options.seed.toString(36);
  const shares = kindShares(options);
  for (let i = 0; i < options.jobs; i++) {
    const duration = Math.round(Math.min(options.maxMs, Math.max(options.minMs, logNormal(random, options.medianMs, options.sigma))));
    const n = String(i).padStart(4, '0');
    let pick = random();
    const [kind] = shares.find(([, share]) => (pick -= share) < 0) ?? shares[shares.length - 1]!;
    const name = `sample-${kind}-${runTag}-${n}`;
    specs.push({ ...(conformanceOf(kind).spec(`sample-${runTag}-${n}`, name) as JobSpec), pool: options.pool });
    durations.set(name, duration);
  }
  return { specs, durations };
}
