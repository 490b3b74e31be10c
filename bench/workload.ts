import { logNormal, seededRandom } from '../local/random';
import type { JobSpec } from '../shared/kinds/registry';

/** One job of a bench workload: its spec, the flow / job name the simulator sees, and how long its run lasts. */
export interface BenchJob {
  spec: JobSpec;
  name: string;
  durationMs: number;
}

/** Log-normal run times: `medianMs * exp(sigma * z)`, clipped to [minMs, maxMs]. */
export interface RunTimes {
  medianMs: number;
  sigma: number;
  minMs: number;
  maxMs: number;
}

/**
 * Names carry their group before `--` (`bench-util--f-0007`): the simulator labels each run with it, so several
 * schedulers and scenarios can share one simulator and still be counted apart.
 */
export const GROUP_SEPARATOR = '--';
export const groupOf = (name: string): string => name.split(GROUP_SEPARATOR)[0]!;

/** Draws run times from a seeded generator: the same seed gives every scheduler the same runs in the same order. */
export function logNormalRunTimes(count: number, times: RunTimes, seed: number): number[] {
  const random = seededRandom(seed);
  return Array.from({ length: count }, () =>
    Math.round(Math.min(times.maxMs, Math.max(times.minMs, logNormal(random, times.medianMs, times.sigma)))),
  );
}

export function uniformRunTimes(count: number, minMs: number, maxMs: number, seed: number): number[] {
  const random = seededRandom(seed);
  return Array.from({ length: count }, () => Math.round(minMs + random() * (maxMs - minMs)));
}

/**
 * Jobs for one group and pool, with the given run times in order. Every `glueEvery`-th job is a Glue job, the others
 * AppFlow flows (0: AppFlow only). Ids and names are unique per group and `tag`.
 */
export function makeJobs(options: {
  group: string;
  pool: string;
  durations: readonly number[];
  tag?: string;
  glueEvery?: number;
  offset?: number;
}): BenchJob[] {
  const { group, pool, durations } = options;
  const tag = options.tag ?? 'j';
  const glueEvery = options.glueEvery ?? 3;
  return durations.map((durationMs, i) => {
    const n = String(i + (options.offset ?? 0)).padStart(5, '0');
    const id = `${group}-${tag}-${n}`;
    if (glueEvery > 0 && i % glueEvery === glueEvery - 1) {
      const name = `${group}${GROUP_SEPARATOR}g-${tag}-${n}`;
      return { spec: { kind: 'glue', pool, id, jobName: name, arguments: { '--day': '2026-11-22' } }, name, durationMs };
    }
    const name = `${group}${GROUP_SEPARATOR}f-${tag}-${n}`;
    return { spec: { kind: 'appflow', pool, id, flowName: name }, name, durationMs };
  });
}

/**
 * What an operator who knows the run-time distribution (not the runs) expects the longest of `limit` runs to take:
 * the mean of the maximum of `limit` draws, by Monte Carlo with a fixed seed.
 */
export function expectedLongestOf(limit: number, times: RunTimes, trials = 20_000, seed = 7): number {
  const draws = logNormalRunTimes(trials * limit, times, seed);
  let sum = 0;
  for (let t = 0; t < trials; t++) {
    let max = 0;
    for (let i = 0; i < limit; i++) max = Math.max(max, draws[t * limit + i]!);
    sum += max;
  }
  return sum / trials;
}
