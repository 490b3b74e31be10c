import { once } from 'node:events';
import net from 'node:net';
import { DynamoLeaseStore } from '../shared/adapters/dynamodb/leaseStore';
import { enqueueJobs } from '../shared/cli/enqueue';
import { PortInUseError } from '../shared/errors';
import { JOB_API_SERVICES } from '../shared/kinds/registry';
import { startEmulators, type Emulators } from './emulators';
import { claimLocalEnvFile, exportLine, localEnvFilePath } from '../shared/cli/localEnvFile';
import { logNormal, seededRandom } from './random';
import { readableFunctionLogs, watchActivity } from './serveActivity';
import { startLocalStack, type LocalStack } from './stack';
import type { StartOptions } from './startArgs';
import { describeRunTimes, makeWorkload } from './workload';
import { loadServiceDefinition } from '../shared/config/serviceDefinition';
import { parsePoolSetting } from '../shared/config/settings';
import { stageSettingsOf } from '../shared/app/stageCheck';

/**
 * `npm start -- --serve`: the whole local stack on fixed ports of 127.0.0.1 until Ctrl-C (SIGINT) or SIGTERM. Prints
 * the `export` lines that point the AWS SDK and `sluice` at it and writes them to the local env file, which `sluice`
 * reads by itself; that file is also the lock against a second instance. Runs of your own jobs last a log-normal time
 * (--median-ms, --sigma, --seed); with --jobs a sample workload is sent at start. One line per start, end and dead
 * letter unless --quiet.
 */
export async function serve(options: StartOptions): Promise<number> {
  const out = (line: string) => process.stdout.write(`${line}\n`);
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const envFile = localEnvFilePath(process.env, options.envFile);
  const claim = await claimLocalEnvFile(envFile);
  let emulators: Emulators | undefined;
  let stack: LocalStack | undefined;
  let stopActivity = () => undefined as void;
  // The functions' JSON log lines (errors, warnings) become lines like the activity lines, on stderr.
  const restoreLogs = readableFunctionLogs();
  const stopped = new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  try {
    await ensurePortsFree(options.ports);
    emulators = await startEmulators({ sqsPort: options.ports.sqs, dynamodbPort: options.ports.dynamodb });
    const workload = makeWorkload(options.workload);
    const random = seededRandom(options.workload.seed);
    const { minMs, maxMs, medianMs, sigma } = options.workload;
    stack = await startLocalStack({
      endpoints: { sqs: emulators.sqsEndpoint, dynamodb: emulators.dynamodbEndpoint },
      ...(options.pools && { env: { POOLS: JSON.stringify(options.pools) } }),
      ...(options.workers > 0 && { functionWorkers: options.workers }),
      simulator: {
        port: options.ports.jobApi,
        // The sample's own run times; any other job a log-normal draw, so your jobs take a realistic, varied time.
        durationMs: (_kind, name) =>
          workload.durations.get(name) ?? Math.round(Math.min(maxMs, Math.max(minMs, logNormal(random, medianMs, sigma)))),
      },
    });
    // The pools exist in the table from the start, so `sluice pool list` shows them before any job arrives.
    // (An unlimited pool has no counter to show: its jobs take none.)
    const pools = parsePoolSetting(process.env.POOLS ?? '{}').limits;
    const leases = new DynamoLeaseStore(stack.doc, stack.tableName);
    for (const [pool, limit] of Object.entries(pools)) await leases.createPool(pool, limit);

    const jobApiEndpoint = stack.simulator.endpoint;
    const vars = {
      AWS_REGION: process.env.AWS_REGION!,
      // The AWS CLI v1 (and older SDKs) read only this one.
      AWS_DEFAULT_REGION: process.env.AWS_REGION!,
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
      AWS_ENDPOINT_URL_SQS: emulators.sqsEndpoint,
      AWS_ENDPOINT_URL_DYNAMODB: emulators.dynamodbEndpoint,
      ...Object.fromEntries(JOB_API_SERVICES.map((service) => [`AWS_ENDPOINT_URL_${service.toUpperCase()}`, jobApiEndpoint])),
      SLUICE_TABLE: stack.tableName,
      SLUICE_QUEUE_URL: stack.queueUrl,
      SLUICE_DLQ_URL: stack.deadLetterUrl,
      SLUICE_CALLBACK_QUEUE_URL: stack.callbackQueueUrl,
    };
    await claim.publish(vars);
    log(`Sluice local stack is up (pid ${process.pid}), on 127.0.0.1 only. Pools: ${describePools(pools)}.`);
    log(`sluice in this checkout finds it by itself (${envFile}); for other tools, paste:`);
    for (const [name, value] of Object.entries(vars)) out(exportLine(name, value));
    log(`Send jobs:  node bin/sluice.cjs enqueue jobs.jsonl     (a spec per line: {"kind":"glue","pool":"default","jobName":"nightly"})`);
    log(`Watch:      node bin/sluice.cjs top   |   node bin/sluice.cjs dashboard   |   node bin/sluice.cjs pool list`);
    log(`Ctrl-C stops it (its data goes with it).`);
    log(`${describeRunTimes(options.workload)}.`);
    const checkStage = options.checkStage
      ? stageSettingsOf(options.checkStage, (await loadServiceDefinition(options.checkStage)).params?.default ?? {})
      : undefined;
    if (checkStage) log(`Each job stage ${checkStage.stage} would refuse, deployed, is named in a warning (--check-stage none: off).`);
    if (!options.quiet) stopActivity = watchActivity(stack, log, { checkStage });
    if (workload.specs.length > 0) {
      const report = await enqueueJobs(stack.sqs, stack.queueUrl, workload.specs);
      log(`Enqueued ${report.sent.length} sample jobs into pool '${options.workload.pool}'.`);
    }
    await stopped;
    log('Stopping the local stack...');
    return 0;
  } finally {
    stopActivity();
    restoreLogs();
    await stack?.stop().catch(() => undefined);
    await emulators?.close().catch(() => undefined);
    await claim.release();
  }
}

function describePools(pools: Record<string, number>): string {
  const names = Object.entries(pools);
  if (names.length === 0) return 'none yet (sluice pool set-limit NAME N --create makes one)';
  return names.map(([name, limit]) => `${name} (limit ${limit}${limit === 0 ? ', paused' : ''})`).join(', ');
}

const PORT_FLAGS = {
  sqs: ['--sqs-port', 'SQS emulator'],
  dynamodb: ['--dynamodb-port', 'DynamoDB emulator'],
  jobApi: ['--jobapi-port', 'job API simulator'],
} as const;

/** Says which port is taken, and the flag that moves it, before anything starts. Port 0 (any free port) is never taken. */
async function ensurePortsFree(ports: StartOptions['ports']): Promise<void> {
  for (const which of Object.keys(PORT_FLAGS) as Array<keyof typeof PORT_FLAGS>) {
    const port = ports[which];
    if (port === 0) continue;
    const server = net.createServer();
    server.listen(port, '127.0.0.1');
    try {
      await Promise.race([once(server, 'listening'), once(server, 'error').then(([error]) => Promise.reject(error as Error))]);
    } catch (error) {
      const [flag, what] = PORT_FLAGS[which];
      if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE')
        throw new PortInUseError(
          `port ${port} (${what}) on 127.0.0.1 is in use by another program: stop it, or choose another with ${flag} N`,
        );
      throw error;
    }
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
