import type { LocalStack, LocalStackOptions } from '../../local/stack';
import { watchReconcilerOf } from './probes';
import { startTestStack } from './testStack';

export interface PoolStackOptions extends Omit<LocalStackOptions, 'endpoints' | 'nameSuffix' | 'env'> {
  /** Run time of a flow or job whose name has no "--<n>ms". */
  defaultRunMs?: number;
  /** The functions' settings on top of the `local` stage's (e.g. MAX_RUN_SECONDS_GLUE), as a stage parameter sets them. */
  env?: Record<string, string>;
}

/**
 * A stack on the shared emulators for a file with pools of its own: the simulator labels each run with its pool (names
 * start with "<pool>--") and takes its duration from the name ("--<n>ms"). The functions are silent unless
 * SLUICE_DEBUG=1: bad input and faults make them log errors by design.
 */
export async function startPoolStack(
  pools: Record<string, number>,
  { defaultRunMs = 200, env = {}, ...options }: PoolStackOptions = {},
): Promise<LocalStack> {
  const stack = await startTestStack({
    ...options,
    env: { ...env, POOLS: JSON.stringify(pools), POWERTOOLS_LOG_LEVEL: process.env.SLUICE_DEBUG === '1' ? 'DEBUG' : 'SILENT' },
    simulator: {
      group: (_kind, name) => name.split('--')[0]!,
      durationMs: (_kind, name) => Number(/--(\d+)ms/.exec(name)?.[1] ?? defaultRunMs),
      ...options.simulator,
    },
  });
  // Every reconciler pass from now on is recorded: the no-leak checks wait for passes, not for periods of time.
  watchReconcilerOf(stack);
  return stack;
}
