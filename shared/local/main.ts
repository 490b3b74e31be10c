import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { parseArgs } from 'node:util';
import { enqueueJobs } from '../cli/enqueue';
import { startLocalStack } from './stack';
import { summarize } from './summary';
import { DEFAULT_WORKLOAD, makeWorkload } from './workload';

const USAGE = `npm start -- [options]
  --jobs N          jobs in the sample workload (default ${DEFAULT_WORKLOAD.jobs})
  --limit N         the pool's concurrency limit (default 8)
  --median-ms N     median run time in ms, log-normal (default ${DEFAULT_WORKLOAD.medianMs})
  --sigma X         log-normal shape of run times (default ${DEFAULT_WORKLOAD.sigma})
  --seed N          random seed of the workload (default ${DEFAULT_WORKLOAD.seed})
  --glue-share X    share of Glue jobs, 0..1 (default ${DEFAULT_WORKLOAD.glueShare})
  --timeout-s N     give up after N seconds (default 300)
  --json            print the summary as one JSON object on the last line`;

/** `npm start`: all of Sluice on this machine, a sample workload through it, and what happened. */
async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      jobs: { type: 'string' },
      limit: { type: 'string' },
      'median-ms': { type: 'string' },
      sigma: { type: 'string' },
      seed: { type: 'string' },
      'glue-share': { type: 'string' },
      'timeout-s': { type: 'string' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const num = (v: string | undefined, fallback: number, name: string) => {
    const n = v === undefined ? fallback : Number(v);
    if (!Number.isFinite(n) || n < 0) throw new Error(`--${name} must be a non-negative number, got ${v}`);
    return n;
  };
  const limit = num(values.limit, 8, 'limit');
  const workloadOptions = {
    ...DEFAULT_WORKLOAD,
    jobs: num(values.jobs, DEFAULT_WORKLOAD.jobs, 'jobs'),
    medianMs: num(values['median-ms'], DEFAULT_WORKLOAD.medianMs, 'median-ms'),
    sigma: num(values.sigma, DEFAULT_WORKLOAD.sigma, 'sigma'),
    seed: num(values.seed, DEFAULT_WORKLOAD.seed, 'seed'),
    glueShare: num(values['glue-share'], DEFAULT_WORKLOAD.glueShare, 'glue-share'),
  };
  const timeoutMs = num(values['timeout-s'], 300, 'timeout-s') * 1000;
  const workload = makeWorkload(workloadOptions);
  const log = (line: string) => process.stderr.write(`${line}\n`);

  log(`Sluice local stack: starting emulators (fauxqs, dynalite), AppFlow/Glue simulator, event bus, poller...`);
  const stack = await startLocalStack({
    env: { POOLS: JSON.stringify({ [workloadOptions.pool]: limit }) },
    simulator: { durationMs: (_kind, name) => workload.durations.get(name) ?? 1000 },
  });
  const started = Date.now();
  try {
    const report = await enqueueJobs(stack.sqs, stack.queueUrl, workload.specs);
    log(`Enqueued ${report.sent.length} jobs (${workload.specs.filter((s) => s.kind === 'glue').length} Glue, ${workload.specs.filter((s) => s.kind === 'appflow').length} AppFlow) into pool '${workloadOptions.pool}' with limit ${limit}.`);
    const total = workload.specs.length;
    const tty = process.stderr.isTTY;
    let lastPrinted = -1;
    for (;;) {
      const runs = stack.simulator.runs();
      const done = runs.filter((r) => r.endedAt !== undefined).length;
      const running = stack.simulator.inProgress();
      const line = progressLine(done, running, total - done - running, total, Date.now() - started);
      if (tty) process.stderr.write(`\r${line}`);
      else if (done !== lastPrinted && (done % 10 === 0 || done === total)) {
        // Without a terminal, a line per tenth of the work instead of a redrawn bar.
        log(line);
        lastPrinted = done;
      }
      if (done >= total) break;
      if (Date.now() - started > timeoutMs) throw new Error(`not done after ${timeoutMs / 1000} s: ${done}/${total} finished`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    if (tty) process.stderr.write('\n');
    await stack.bus.drain();
    const dlq = await stack.sqs.send(new GetQueueAttributesCommand({ QueueUrl: stack.deadLetterUrl, AttributeNames: ['ApproximateNumberOfMessages'] }));
    const summary = summarize({
      jobs: total,
      limit,
      runs: stack.simulator.runs(),
      events: stack.simulator.emitted(),
      maxObservedConcurrency: stack.simulator.maxObservedConcurrency(),
      deadLettered: Number(dlq.Attributes?.ApproximateNumberOfMessages ?? 0),
    });
    log('');
    log(`Jobs done:                 ${summary.succeeded + summary.failed}/${summary.jobs} (${summary.succeeded} succeeded, ${summary.failed} failed, ${summary.deadLettered} dead-lettered)`);
    log(`Highest concurrency seen:  ${summary.maxObservedConcurrency} (limit ${limit}; counted by the AppFlow/Glue simulator)`);
    log(`Makespan:                  ${(summary.makespanMs / 1000).toFixed(1)} s`);
    log(`Utilization:               ${(summary.utilization * 100).toFixed(1)}% (busy slot-time / (limit x makespan))`);
    log(`Hand-off latency:          p50 ${summary.handoffP50Ms} ms, p99 ${summary.handoffP99Ms} ms over ${summary.handoffs} hand-offs`);
    log(`AWS requests:              ${JSON.stringify(stack.requests.byService())}`);
    if (values.json) console.log(JSON.stringify(summary));
    return summary.maxObservedConcurrency <= limit && summary.succeeded + summary.failed === total ? 0 : 1;
  } finally {
    await stack.stop();
  }
}

function progressLine(done: number, running: number, waiting: number, total: number, elapsedMs: number): string {
  const width = 30;
  const filled = total === 0 ? width : Math.round((done / total) * width);
  const bar = '#'.repeat(filled) + '-'.repeat(width - filled);
  return `[${bar}] ${done}/${total} done | ${running} running | ${Math.max(0, waiting)} waiting | ${(elapsedMs / 1000).toFixed(1)} s`;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? error.stack ?? error.message : error);
    process.exit(1);
  },
);
