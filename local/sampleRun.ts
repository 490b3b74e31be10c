import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { enqueueJobs } from '../shared/cli/enqueue';
import { WorkloadTimeoutError } from '../shared/errors';
import { KINDS } from '../shared/kinds/registry';
import { startLocalStack } from './stack';
import { defaultTimeoutMs, type StartOptions } from './startArgs';
import { summarize } from './summary';
import { poolFullAt, shortfall } from '../bench/scenarios/burst';
import { measureHandoffs } from '../bench/scenarios/handoff';
import { Tracer } from '../bench/tracer';
import { describeRunTimes, makeWorkload } from './workload';

/** `npm start`: all of Sluice on this machine, a sample workload through it, and what happened. Returns the exit code. */
export async function runSample(options: StartOptions): Promise<number> {
  const { workload: workloadOptions, limit } = options;
  const timeoutMs = options.timeoutMs ?? defaultTimeoutMs(workloadOptions, limit);
  const workload = makeWorkload(workloadOptions);
  const log = (line: string) => process.stderr.write(`${line}\n`);

  log(
    `Sluice local stack: starting emulators (fauxqs, dynalite), job API simulator (${KINDS.map((k) => k.title).join(', ')}), event bus, poller...`,
  );
  // The bench's tracer: hand-offs paired exactly by the releaser's pass transaction, as the bench measures them.
  let queueUrl = '';
  const tracer = new Tracer(() => queueUrl);
  const stack = await startLocalStack({
    env: { POOLS: JSON.stringify({ [workloadOptions.pool]: limit }) },
    simulator: { durationMs: (_kind, name) => workload.durations.get(name) ?? 1000 },
    bus: { onDeliver: (attempt) => tracer.onDeliver(attempt) },
    // Traced before the pollers' first long poll, which a tracer added later would miss.
    onClients: (clients) => {
      tracer.instrument(clients.sqs, 'sqs');
      tracer.instrument(clients.dynamodb, 'dynamodb');
    },
    ...(options.workers > 0 && { functionWorkers: options.workers, onWorkerCall: (call) => tracer.ingest(call) }),
  });
  queueUrl = stack.queueUrl;
  const started = Date.now();
  try {
    const report = await enqueueJobs(stack.sqs, stack.queueUrl, workload.specs);
    log(
      `Enqueued ${report.sent.length} jobs (${countsByKind(workload.specs)}) into pool '${workloadOptions.pool}' with limit ${limit}; giving up after ${Math.round(timeoutMs / 1000)} s.`,
    );
    log(`${describeRunTimes(workloadOptions)}.`);
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
      if (Date.now() - started > timeoutMs) {
        if (tty) process.stderr.write('\n');
        throw new WorkloadTimeoutError(
          `not done after ${Math.round(timeoutMs / 1000)} s: ${done}/${total} finished (a longer --timeout-s, a higher --limit or fewer --jobs)`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    if (tty) process.stderr.write('\n');
    await stack.bus.drain();
    const dlq = await stack.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: stack.deadLetterUrl, AttributeNames: ['ApproximateNumberOfMessages'] }),
    );
    const runs = stack.simulator.runs();
    const handoffs = measureHandoffs(runs, tracer, limit);
    const full = poolFullAt(runs, limit);
    const lastStart = Math.max(...runs.map((run) => run.startedAt));
    const lost = full === undefined ? { shortfallMs: 0 } : shortfall(runs, limit, full, lastStart);
    const windowMs = full === undefined ? 0 : lastStart - full;
    const summary = summarize({
      jobs: total,
      limit,
      runs,
      handoffs,
      shortfall: {
        slotSeconds: Math.round(lost.shortfallMs) / 1000,
        share: windowMs > 0 ? Math.round((lost.shortfallMs / (windowMs * limit)) * 1000) / 1000 : 0,
      },
      maxObservedConcurrency: stack.simulator.maxObservedConcurrency(),
      deadLettered: Number(dlq.Attributes?.ApproximateNumberOfMessages ?? 0),
    });
    log('');
    log(
      `Jobs done:                 ${summary.succeeded + summary.failed}/${summary.jobs} (${summary.succeeded} succeeded, ${summary.failed} failed, ${summary.deadLettered} dead-lettered)`,
    );
    log(
      `By kind:                   ${Object.entries(summary.byKind)
        .map(([kind, k]) => `${kind} ${k.succeeded}/${k.jobs} succeeded`)
        .join(', ')}`,
    );
    log(
      `Highest concurrency seen:  ${summary.maxObservedConcurrency} (limit ${limit}; counted by the job API simulator, all kinds together)`,
    );
    log(`Makespan:                  ${(summary.makespanMs / 1000).toFixed(1)} s`);
    log(`Utilization:               ${(summary.utilization * 100).toFixed(1)}% (busy slot-time / (limit x makespan))`);
    log(
      `Hand-off latency:          p50 ${summary.handoffP50Ms} ms, p99 ${summary.handoffP99Ms} ms over ${summary.handoffs} hand-offs (${summary.oneHopHandoffs} started by the releaser itself; from the completion event to the next start call, paired by the slot's transfer)`,
    );
    log(
      `Below the limit:           ${summary.shortfallSlotSeconds} slot-seconds (${(summary.shortfallShare * 100).toFixed(1)}% of the slot-time while jobs waited)`,
    );
    log(`AWS requests:              ${JSON.stringify(stack.requests.byService())}`);
    log(`Keep the stack up for your own jobs: npm start -- --serve`);
    if (options.json) console.log(JSON.stringify(summary));
    return summary.maxObservedConcurrency <= limit && summary.succeeded + summary.failed === total ? 0 : 1;
  } finally {
    await stack.stop();
  }
}

function countsByKind(specs: ReadonlyArray<{ kind: string }>): string {
  return KINDS.map((k) => [k.kind, specs.filter((s) => s.kind === k.kind).length] as const)
    .filter(([, n]) => n > 0)
    .map(([kind, n]) => `${n} ${kind}`)
    .join(', ');
}

export function progressLine(done: number, running: number, waiting: number, total: number, elapsedMs: number): string {
  const width = 30;
  const filled = total === 0 ? width : Math.round((done / total) * width);
  const bar = '#'.repeat(filled) + '-'.repeat(width - filled);
  return `[${bar}] ${done}/${total} done | ${running} running | ${Math.max(0, waiting)} waiting | ${(elapsedMs / 1000).toFixed(1)} s`;
}
