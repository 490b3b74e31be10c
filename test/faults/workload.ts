import type { LocalStack, LocalStackOptions } from '../../shared/local/stack';
import { startTestStack } from '../support/testStack';

/**
 * What the fault tests share: a stack per file whose simulator labels each run with its pool (names start with
 * "<pool>--") and takes its duration from the name ("--<n>ms"), and job specs in that form, AppFlow and Glue mixed.
 */
export async function startFaultStack(pools: Record<string, number>, options: Omit<LocalStackOptions, 'endpoints' | 'nameSuffix' | 'env'> = {}): Promise<LocalStack> {
  return startTestStack({
    ...options,
    // Faults make the functions log errors by design; SLUICE_DEBUG=1 shows them.
    env: { POOLS: JSON.stringify(pools), POWERTOOLS_LOG_LEVEL: process.env.SLUICE_DEBUG === '1' ? 'DEBUG' : 'SILENT' },
    simulator: {
      group: (_kind, name) => name.split('--')[0]!,
      durationMs: (_kind, name) => Number(/--(\d+)ms/.exec(name)?.[1] ?? 200),
      ...options.simulator,
    },
  });
}

export type Spec =
  | { kind: 'appflow'; pool: string; id: string; flowName: string }
  | { kind: 'glue'; pool: string; id: string; jobName: string; arguments: Record<string, string> };

/** `count` jobs of `pool`: every other one Glue, durations from `durationMs(i)`. */
export function jobsFor(pool: string, count: number, durationMs: (i: number) => number, from = 0): Spec[] {
  return Array.from({ length: count }, (_, n) => {
    const i = from + n;
    const name = `${pool}--${i}--${durationMs(i)}ms`;
    return i % 2 === 1
      ? { kind: 'glue', pool, id: `${pool}-${i}`, jobName: name, arguments: { '--day': '2026-11-22' } }
      : { kind: 'appflow', pool, id: `${pool}-${i}`, flowName: name };
  });
}
