import type { Emulators } from '../local/emulators';
import { type Endpoints, startHarness } from './harness';
import { type HotspotParams, runHotspot } from './scenarios/hotspot';

/**
 * The hotspot scenario (./scenarios/hotspot.ts) in a process of its own, as the schedule one: N jobs due in one second
 * on a limited pool (limit 10,000, above the runs in flight) and then on an unlimited one. Options as JSON in argv[2]
 * (all optional): `jobs` (default 2000), `pollers` (16), `workers` (function worker threads, 0), `runMs` (1000),
 * `leadMs` (5000, at least 6 ms a job), `timeoutMs`, `unlimitedFirst` (false). Logs to stderr; prints the result as one JSON line on stdout.
 *
 *   npx tsx bench/hotspotMain.ts '{"jobs":30000}'
 */
export interface HotspotChildOptions extends Partial<Omit<HotspotParams, 'limitedPool' | 'unlimitedPool'>> {
  pollers?: number;
  workers?: number;
  endpoints?: Endpoints;
  nameSuffix?: string;
}

/** The largest limit a pool may have (shared/domain/pool.ts). */
const LARGE_LIMIT = 10_000;

async function main(): Promise<void> {
  const options = JSON.parse(process.argv[2] ?? '{}') as HotspotChildOptions;
  const log = (line: string) => process.stderr.write(`${line}\n`);
  process.once('SIGTERM', () => process.exit(143));
  const jobs = options.jobs ?? 2000;
  let emulators: Emulators | undefined;
  try {
    let endpoints = options.endpoints;
    if (!endpoints) {
      const { startEmulators } = await import('../local/emulators');
      emulators = await startEmulators();
      endpoints = { sqs: emulators.sqsEndpoint, dynamodb: emulators.dynamodbEndpoint };
    }
    const pollers = options.pollers ?? 16;
    const h = await startHarness({
      endpoints,
      nameSuffix: options.nameSuffix ?? '-hotspot',
      pools: { 'bench-hot-limited': LARGE_LIMIT },
      unlimitedPools: ['bench-hot-unlimited'],
      pollerConcurrency: pollers,
      ...(options.workers ? { functionWorkers: options.workers } : {}),
      log,
    });
    log(`local stack up for the hotspot (${jobs} jobs, ${pollers} pollers, ${options.workers ?? 0} worker threads a function)`);
    try {
      const result = await runHotspot(h, {
        jobs,
        limitedPool: 'bench-hot-limited',
        unlimitedPool: 'bench-hot-unlimited',
        leadMs: options.leadMs ?? 5000,
        runMs: options.runMs ?? 1000,
        timeoutMs: options.timeoutMs ?? Math.max(600_000, jobs * 300),
        ...(options.unlimitedFirst && { unlimitedFirst: true }),
      });
      process.stdout.write(`${JSON.stringify({ result, handlerErrors: h.handlerErrors.length })}\n`);
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
