import os from 'node:os';
import { type Endpoints, startHarness } from './harness';
import { runThroughput, type ThroughputParams } from './scenarios/throughput';

/**
 * The throughput scenario with Sluice's functions in worker threads (issue 13), in a process of its own (runBench
 * spawns it), as the schedule and capacity ones: Sluice's clients and container are process-wide, and this run needs a
 * stack of its own. Reads its options as JSON from argv[2]; logs to stderr; prints the result as one JSON line on
 * stdout.
 */
export interface ThroughputThreadsChildOptions {
  throughput: Omit<ThroughputParams, 'pool'>;
  /** Worker threads per function with an event source. */
  threads: number;
  pollers: number;
  endpoints: Endpoints;
  nameSuffix: string;
}

const POOL = 'bench-tput-threads';

async function main(): Promise<void> {
  const options = JSON.parse(process.argv[2] ?? '{}') as ThroughputThreadsChildOptions;
  const log = (line: string) => process.stderr.write(`${line}\n`);
  process.once('SIGTERM', () => process.exit(143));
  const h = await startHarness({
    endpoints: options.endpoints,
    nameSuffix: options.nameSuffix,
    pools: { [POOL]: options.throughput.limit },
    pollerConcurrency: options.pollers,
    functionWorkers: options.threads,
    log,
  });
  log(`local stack up for throughput with the functions in worker threads (${options.threads} per function)`);
  try {
    const result = await runThroughput(h, { pool: POOL, ...options.throughput }, os.cpus().length);
    process.stdout.write(`${JSON.stringify({ result, handlerErrors: h.handlerErrors })}\n`);
  } finally {
    await h.stop();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : error);
    process.exit(1);
  },
);
