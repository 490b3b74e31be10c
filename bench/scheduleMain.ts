import type { Emulators } from '../local/emulators';
import { type Endpoints, startHarness } from './harness';
import { type HotspotParams, type HotspotResult, runHotspot } from './scenarios/hotspot';
import { runSchedule, type ScheduleParams, type ScheduleResult } from './scenarios/schedule';

/**
 * The schedule and hotspot scenarios in a process of its own (runBench spawns it), as the capacity one: Sluice's clients
 * and container are process-wide, and these runs need a stack with its own pollers (the acquirer holds a batch up to a
 * second for the sub-second rest of a delay; Lambda runs many batches at once, the local poller one per poller). Reads
 * its options as JSON from argv[2]; logs to stderr; prints the result as one JSON line on stdout: `{ result, hotspot,
 * seconds, handlerErrors }` (each scenario's wall-clock seconds in `seconds`).
 */
export interface ScheduleChildOptions {
  /** The schedule scenario (none: not run). */
  schedule?: Omit<ScheduleParams, 'pool'> & { pollers: number };
  /** The hotspot scenario, after it on the same stack: N jobs due in one second, on a limited then an unlimited pool. */
  hotspot?: Omit<HotspotParams, 'limitedPool' | 'unlimitedPool'>;
  pollers: number;
  /** Emulators already running; without them this process starts its own. */
  endpoints?: Endpoints;
  nameSuffix: string;
}

export interface ScheduleChildResult {
  result: ScheduleResult | null;
  hotspot: HotspotResult | null;
  seconds: { schedule?: number; hotspot?: number };
  handlerErrors: Array<{ fn: string; error: string }>;
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
      pools: { 'bench-sched': FREE_POOL_LIMIT, 'bench-hot-limited': FREE_POOL_LIMIT },
      unlimitedPools: ['bench-hot-unlimited'],
      pollerConcurrency: options.schedule?.pollers ?? options.pollers,
      log,
    });
    log(`local stack up for schedule and hotspot (${options.schedule?.pollers ?? options.pollers} pollers)`);
    const out: ScheduleChildResult = { result: null, hotspot: null, seconds: {}, handlerErrors: [] };
    try {
      if (options.schedule) {
        const t0 = Date.now();
        out.result = await runSchedule(h, { pool: 'bench-sched', ...options.schedule });
        out.seconds.schedule = Math.round((Date.now() - t0) / 1000);
      }
      if (options.hotspot) {
        const t0 = Date.now();
        out.hotspot = await runHotspot(h, { ...options.hotspot, limitedPool: 'bench-hot-limited', unlimitedPool: 'bench-hot-unlimited' });
        out.seconds.hotspot = Math.round((Date.now() - t0) / 1000);
      }
      out.handlerErrors = h.handlerErrors;
      process.stdout.write(`${JSON.stringify(out)}\n`);
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
