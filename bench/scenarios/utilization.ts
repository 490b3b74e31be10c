import type { RequestCounter } from '../../local/infra/requestCounter';
import { type SimRun, startJobApiSimulator } from '../../local/simulators';
import { runBackoffGate } from '../baselines/backoffGate';
import { runFixedBatches } from '../baselines/fixedBatches';
import { SimJobApi } from '../baselines/jobApi';
import { runStatusPoller } from '../baselines/statusPoller';
import { driftSince, type Harness, perJob, type RequestsPerJob, slotsFreedByReconciler, waitUntil } from '../harness';
import { idealFifoMakespan, scheduleStats, stepTimeline } from '../metrics';
import type { EarlyCompletions } from '../tracer';
import { expectedLongestOf, GROUP_SEPARATOR, groupOf, logNormalRunTimes, makeJobs, type RunTimes } from '../workload';
import { type HandoffMeasurement, measureHandoffs } from './handoff';

export const SCHEDULERS = ['sluice', 'batches', 'poller', 'backoff'] as const;
export type Scheduler = (typeof SCHEDULERS)[number];

export interface UtilizationParams {
  jobs: number;
  limit: number;
  runTimes: RunTimes;
  seed: number;
  /** Real minutes per compressed ms: 20-minute runs as 2,000 ms is 1/600. */
  timeScale: number;
  /** Step Functions poll period, real ms (5 minutes), compressed by timeScale. */
  realPollMs: number;
  /** Visibility backoff of the counter gate, whole seconds on the emulator (SQS allows no less than 1). */
  backoffSeconds: number;
  /**
   * Run the baselines at the same time: the status poller and the counter gate side by side after Sluice (separate
   * groups on the stack's simulator), the fixed batches from the start beside everything (see runUtilization). False:
   * each scheduler alone, one after another.
   */
  parallelBaselines: boolean;
  timeoutMs: number;
}

export interface SchedulerResult {
  jobs: number;
  makespanMs: number;
  idealMakespanMs: number;
  utilization: number;
  efficiency: number;
  maxConcurrency: number;
  /** The scheduler's own AWS requests per job (SQS, DynamoDB, job APIs) and function invocations. */
  requestsPerJob: Omit<RequestsPerJob, 'ops'> & { ops: Record<string, number> };
  notes: string;
  /** Sluice only: completion events that beat the acquirer's write of the run record (noted, then completed by the acquirer). */
  earlyCompletions?: EarlyCompletions;
  /** Sluice only: slots its periodic reconciler freed during the run (a lost event, a leaked or orphaned slot, an overdue run). */
  reconcilerFreedSlots?: number;
  /** Sluice only: everything its periodic reconciler put right during the run, by drift. */
  reconcilerDrift?: Record<string, number>;
  /** Sluice only: slots passed on before the releaser had the run's completion event (see HandoffMeasurement). */
  releasedBeforeEvent?: number;
  /** Runs in progress over time, from the first start call (ms, count). */
  timeline: Array<{ t: number; n: number }>;
}

export interface UtilizationResult {
  /** batchesBesideSluice: the fixed batches ran beside Sluice and the others, on a simulator of their own. */
  params: UtilizationParams & { batchIntervalMs: number; pollMs: number; batchesBesideSluice: boolean };
  schedulers: Record<Scheduler, SchedulerResult>;
  /** Hand-offs of the Sluice run: all jobs arrive at once, so the first ones overlap with the arrival burst. */
  sluiceHandoffs: HandoffMeasurement;
}

const r4 = (x: number) => Math.round(x * 10_000) / 10_000;
const r3 = (x: number) => Math.round(x * 1000) / 1000;

function baselineRequests(
  counters: RequestCounter[],
  invocations: number,
  jobs: number,
  emptyReceives = 0,
): SchedulerResult['requestsPerJob'] {
  const ops: Record<string, number> = {};
  for (const c of counters) for (const [k, n] of Object.entries(c.snapshot())) ops[k] = (ops[k] ?? 0) + n;
  if (ops['sqs.ReceiveMessage'] !== undefined) ops['sqs.ReceiveMessage'] -= emptyReceives;
  const sum = (prefix: string[]) => Object.entries(ops).reduce((s, [k, n]) => (prefix.some((p) => k.startsWith(p)) ? s + n : s), 0);
  const sqs = sum(['sqs.']);
  const jobApi = sum(['appflow.', 'glue.']);
  const per = (n: number) => r3(n / jobs);
  return {
    sqs: per(sqs),
    dynamodb: 0,
    dynamodbReads: 0,
    dynamodbWrites: 0,
    dynamodbWriteUnits: 0,
    jobApi: per(jobApi),
    lambda: per(invocations),
    events: 0,
    total: per(sqs + jobApi + invocations),
    ops: Object.fromEntries(Object.entries(ops).map(([k, n]) => [k, per(n)])),
    emptyReceives: per(emptyReceives),
  };
}

/** A utilization run whose fixed batches may still be running: `finished` resolves with every scheduler's result. */
export interface UtilizationRun {
  finished: Promise<UtilizationResult>;
}

/**
 * Sluice alone on the stack's simulator, then the status poller and the counter gate side by side on it. The fixed
 * batches (a tick every few seconds for about 3 minutes: the longest of the four, and nearly all of it waiting) run
 * on a job API simulator of their own that emits no events (a tick asks the job APIs; it needs none): on the stack's,
 * their completion events would reach Sluice's releaser and be counted as Sluice's requests. Their requests are
 * counted on their own client, as before. With `parallelBaselines` they start with Sluice's run, this returns once
 * the poller and the gate are done, and `finished` waits for the batches, which go on beside whatever the bench runs
 * next: a few calls to their own simulator per tick, none of them Sluice's. Without it every scheduler runs alone, one
 * after another, and `finished` is settled on return.
 */
export async function runUtilization(h: Harness, p: UtilizationParams): Promise<UtilizationRun> {
  const durations = logNormalRunTimes(p.jobs, p.runTimes, p.seed);
  const ideal = idealFifoMakespan(durations, p.limit);
  const batchIntervalMs = Math.round(expectedLongestOf(p.limit, p.runTimes));
  const pollMs = Math.round(p.realPollMs * p.timeScale);
  const results = {} as Record<Scheduler, SchedulerResult>;
  const finish = (
    name: Scheduler,
    group: string,
    requestsPerJob: SchedulerResult['requestsPerJob'],
    notes: string,
    runs: SimRun[] = h.runsOf(group),
  ) => {
    const stats = scheduleStats(runs, p.limit);
    const t0 = Math.min(...runs.map((r) => r.startCallAt));
    results[name] = {
      jobs: stats.jobs,
      makespanMs: stats.makespanMs,
      idealMakespanMs: ideal,
      utilization: r4(stats.utilization),
      efficiency: r4(stats.makespanMs > 0 ? ideal / stats.makespanMs : 0),
      maxConcurrency: stats.maxConcurrency,
      requestsPerJob,
      notes,
      timeline: stepTimeline(runs, t0),
    };
    h.log(
      `  ${name}: makespan ${(stats.makespanMs / 1000).toFixed(1)} s (ideal ${(ideal / 1000).toFixed(1)} s), utilization ${(stats.utilization * 100).toFixed(1)}%, max ${stats.maxConcurrency} running`,
    );
  };

  // The baselines, on the same run times and time scale.
  const api = (endpoint: string) => new SimJobApi(endpoint, h.region, h.credentials);
  const batches = async () => {
    const group = 'bench-batches';
    // The stack's simulator's behaviour (run times from the workload, runs labelled by group), without its events.
    const simulator = await startJobApiSimulator({
      durationMs: (_kind, name) => h.durations.get(name) ?? 1000,
      group: (_kind, name) => groupOf(name),
    });
    const client = api(simulator.endpoint);
    try {
      const report = await runFixedBatches(
        client,
        h.register(makeJobs({ group, pool: group, durations, tag: 'u' })),
        p.limit,
        batchIntervalMs,
      );
      const runs = () => simulator.runs().filter((run) => run.group === group);
      await waitUntil(
        `${p.jobs} runs of ${group} ended`,
        () => runs().filter((run) => run.endedAt !== undefined).length >= p.jobs,
        p.timeoutMs,
        50,
      );
      finish(
        'batches',
        group,
        baselineRequests([client.requests], report.ticks, p.jobs),
        `a tick every ${batchIntervalMs} ms (the expected longest of ${p.limit} runs); ${report.skippedTicks} of ${report.ticks} ticks found the batch still running`,
        runs(),
      );
    } finally {
      client.destroy();
      await simulator.close();
    }
  };
  const batchesDone = p.parallelBaselines ? batches() : undefined;
  batchesDone?.catch(() => undefined); // awaited by `finished`; not unhandled meanwhile

  // Sluice, the only one on the stack's simulator while it runs.
  const pool = 'bench-util';
  h.log(
    `utilization: ${p.jobs} jobs, limit ${p.limit}, runs log-normal median ${p.runTimes.medianMs} ms sigma ${p.runTimes.sigma}; ideal FIFO makespan ${(ideal / 1000).toFixed(1)} s${batchesDone ? ' (the fixed batches beside it, on a simulator of their own)' : ''}`,
  );
  const jobs = makeJobs({ group: pool, pool, durations, tag: 'u' });
  const before = h.snapshot();
  const freed0 = slotsFreedByReconciler(h);
  const drift0 = new Map(h.reconcilerDrift);
  const stopReconciler = h.reconcileEvery(h.reconcilePeriodMs);
  try {
    await h.enqueue(jobs);
    await h.tracer.waitEnded(pool, p.jobs, p.timeoutMs);
    await h.settle(pool);
  } finally {
    stopReconciler();
  }
  const after = h.snapshot();
  const sluiceHandoffs = measureHandoffs(h.runsOf(pool), h.tracer, p.limit);
  finish('sluice', pool, perJob(before, after, p.jobs), `reconciler every ${h.reconcilePeriodMs} ms (the stack's compressed schedule)`);
  results.sluice.earlyCompletions = sluiceHandoffs.earlyCompletions;
  results.sluice.reconcilerFreedSlots = slotsFreedByReconciler(h) - freed0;
  results.sluice.reconcilerDrift = driftSince(h, drift0);
  results.sluice.releasedBeforeEvent = sluiceHandoffs.releasedBeforeEvent;

  const poller = async () => {
    const group = 'bench-poller';
    const client = api(h.stack.simulator.endpoint);
    try {
      const report = await runStatusPoller(client, h.register(makeJobs({ group, pool: group, durations, tag: 'u' })), p.limit, pollMs);
      await h.tracer.waitEnded(group, p.jobs, p.timeoutMs);
      // The blog's state machine calls start and getStatus through Lambda functions: one invocation per call.
      finish(
        'poller',
        group,
        baselineRequests([client.requests], report.starts + report.statusCalls, p.jobs),
        `${report.polls} polls every ${pollMs} ms, ${report.statusCalls} status calls`,
      );
    } finally {
      client.destroy();
    }
  };
  const backoff = async () => {
    const group = 'bench-backoff';
    const client = api(h.stack.simulator.endpoint);
    try {
      const gate = await runBackoffGate(client, h.register(makeJobs({ group, pool: group, durations, tag: 'u' })), {
        sqsEndpoint: h.endpoints.sqs,
        region: h.region,
        credentials: h.credentials,
        queueName: `bench-backoff-gate${h.nameSuffix}`,
        bus: h.stack.bus,
        namePrefix: `${group}${GROUP_SEPARATOR}`,
        limit: p.limit,
        backoffSeconds: p.backoffSeconds,
        pollers: 4,
      });
      await h.tracer.waitEnded(group, p.jobs, p.timeoutMs);
      await h.stack.bus.drain();
      await gate.cleanup();
      const r = gate.report;
      finish(
        'backoff',
        group,
        baselineRequests([client.requests, r.requests], r.gateInvocations + r.releaseInvocations, p.jobs, r.emptyReceives),
        `${r.received} receives for ${p.jobs} jobs, a job received up to ${r.maxReceiveCount} times (${r.wouldDeadLetterAt10} jobs would reach a DLQ at maxReceiveCount 10); the bench keeps the counter in memory, the real design in DynamoDB, one conditional write per receive (${Math.round((r.received / p.jobs) * 10) / 10} per job more, not counted)`,
      );
    } finally {
      client.destroy();
    }
  };
  h.log(
    `  baselines${p.parallelBaselines ? ' (in parallel; the batches since Sluice started)' : ''}: batches every ${batchIntervalMs} ms, poller every ${pollMs} ms, gate backoff ${p.backoffSeconds} s`,
  );
  if (batchesDone) await Promise.all([poller(), backoff()]);
  else for (const run of [batches, poller, backoff]) await run();
  const params = { ...p, batchIntervalMs, pollMs, batchesBesideSluice: batchesDone !== undefined };
  return { finished: (batchesDone ?? Promise.resolve()).then(() => ({ params, schedulers: results, sluiceHandoffs })) };
}
