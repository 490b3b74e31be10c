import type { Emulators } from '../local/emulators';
import { type Endpoints, startHarness } from './harness';
import { runSchedule, type ScheduleParams } from './scenarios/schedule';

/**
 * The schedule scenario in a process of its own (runBench spawns it), as the capacity one: Sluice's clients and
 * container are process-wide, and this run needs a stack with its own pollers (the acquirer holds a batch up to a second
 * for the sub-second rest of a delay; Lambda runs many batches at once, the local poller one per poller). Reads its
 * options as JSON from argv[2]; logs to stderr; prints the result as one JSON line on stdout.
 */
export interface ScheduleChildOptions {
  schedule: Omit<ScheduleParams, 'pool'> & { pollers: number };
  /** Emulators already running; without them this process starts its own. */
  endpoints?: Endpoints;
  nameSuffix: string;
}

/** The largest limit a pool may have (shared/domain/pool.ts): the pool is free when it is above the runs in flight. */
const FREE_POOL_LIMIT = 10_000;

async function main(): Promise<void> {
  const options = JSON.parse(process.argv[2] ?? '{}') as ScheduleChildOptions;
  const log = (line: string) => process.stderr.write(`${line}\n`);
  process.once('SIGTERM', () => process.exit(143));
  let emulators: Emulators | undefined;
  try {
    let endpoints = options.endpoints;
    if (!endpoints) {
      const { startEmulators } = await import('../local/emulators');
      emulators = await startEmulators();
      endpoints = { sqs: emulators.sqsEndpoint, dynamodb: emulators.dynamodbEndpoint };
    }
    const h = await startHarness({
      endpoints,
      nameSuffix: options.nameSuffix,
      pools: { 'bench-sched': FREE_POOL_LIMIT },
      pollerConcurrency: options.schedule.pollers,
      log,
    });
    log(`local stack up for schedule (${options.schedule.pollers} pollers)`);
    try {
      const result = await runSchedule(h, { pool: 'bench-sched', ...options.schedule });
      process.stdout.write(`${JSON.stringify({ result, handlerErrors: h.handlerErrors })}\n`);
    } finally {
      await h.stop();
    }
  } finally {
    await emulators?.close();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : error);
    process.exit(1);
  },
);
