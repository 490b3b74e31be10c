import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { onJobApiClient } from '../shared/adapters/awsClients';
import { DynamoLeaseStore } from '../shared/adapters/dynamodb/leaseStore';
import type { PoolAdmin } from '../shared/app/poolAdmin';
import { Drift } from '../shared/app/reconcile';
import type { LeaseStore } from '../shared/ports/leaseStore';
import type { SimRun } from '../local/simulators';
import { type LocalStack, startLocalStack } from '../local/stack';
import { rateToMs } from '../local/infra/schedule';
import { countRequests, RequestCounter } from '../local/infra/requestCounter';
import { benchScope, callerOf, Tracer } from './tracer';
import { type BenchJob, groupOf } from './workload';

export interface Endpoints {
  sqs: string;
  dynamodb: string;
}

export interface HarnessOptions {
  /** Emulators already running; without them the stack starts fauxqs and dynalite in this process. */
  endpoints?: Endpoints;
  nameSuffix?: string;
  /** Every pool the bench uses, with its initial limit (0: paused until the bench raises it). */
  pools: Record<string, number>;
  /** Pools configured "unlimited" (POOLS): no counter to create, their jobs take none. */
  unlimitedPools?: readonly string[];
  /** Parallel pollers of the acquirer's queue (the stack's default is 4; Lambda scales its own). */
  pollerConcurrency?: number;
  /** More environment for the functions, as stage parameters would set it (POOLS comes from `pools`). */
  env?: Record<string, string>;
  /** Worker threads per function (the stack's functionWorkers; 0: the functions run in the bench's own thread). */
  functionWorkers?: number;
  log: (line: string) => void;
}

/** Requests Sluice made, by service and operation, and the Lambda invocations, at one moment. */
export interface CountSnapshot {
  at: number;
  ops: Record<string, number>;
  acquirer: number;
  releaser: number;
  reconciler: number;
  emptyReceives: number;
  /** Items of TransactWriteItems (cancelled ones included) and holders-index entries written by slot changes (Tracer). */
  transactItems: number;
  indexWrites: number;
  /** Entries of the `ended` index written (Tracer.endedIndexWrites): by plain writes, and by items of transactions. */
  endedIndexWrites: number;
  endedIndexWritesInTransactions: number;
}

/** Requests per job by service. `lambda` is invocations; `total` adds every column but the read/write split. */
export interface RequestsPerJob {
  sqs: number;
  dynamodb: number;
  dynamodbReads: number;
  dynamodbWrites: number;
  /**
   * Write units of those writes by DynamoDB's rules, for items under 1 KB (Sluice's are): 1 per plain write, 2 per item
   * of a TransactWriteItems (a ConditionCheck billed as a write; cancelled transactions counted as if applied), 2 per
   * holders-index entry a slot change puts or deletes (what DynamoDB Local reports for it), and one entry of the `ended`
   * index per job that ends (a moved entry two: delete and put), 1 unit by a plain write, 2 by a transaction's item. The
   * capacity scenario measures them on DynamoDB Local.
   */
  dynamodbWriteUnits: number;
  jobApi: number;
  lambda: number;
  /** Sluice's own events put on the bus (PutEvents): billed as custom events, unlike the AWS service events it reads. */
  events: number;
  total: number;
  /** Per operation, per job. */
  ops: Record<string, number>;
  /** Empty receives of the job queue per job: an emulator artifact (see Tracer.emptyReceives), not in the totals. */
  emptyReceives: number;
}

export const SERVICE_COLUMNS = ['sqs', 'dynamodb', 'jobApi', 'lambda', 'events'] as const;

const r3 = (x: number) => Math.round(x * 1000) / 1000;

export function perJob(from: CountSnapshot, to: CountSnapshot, jobs: number): RequestsPerJob {
  const ops: Record<string, number> = {};
  for (const [key, n] of Object.entries(to.ops)) {
    const d = n - (from.ops[key] ?? 0);
    if (d > 0) ops[key] = d;
  }
  const empty = to.emptyReceives - from.emptyReceives;
  if (ops['sqs.ReceiveMessage'] !== undefined) ops['sqs.ReceiveMessage'] = Math.max(0, ops['sqs.ReceiveMessage'] - empty);
  const sum = (test: (key: string) => boolean) => Object.entries(ops).reduce((s, [k, n]) => (test(k) ? s + n : s), 0);
  const sqs = sum((k) => k.startsWith('sqs.'));
  const dynamodb = sum((k) => k.startsWith('dynamodb.'));
  const reads = sum((k) => /^dynamodb\.(GetItem|Query|Scan|BatchGetItem|TransactGetItems)$/.test(k));
  const transactions = ops['dynamodb.TransactWriteItems'] ?? 0;
  const writeUnits =
    dynamodb -
    reads -
    transactions +
    2 * (to.transactItems - from.transactItems) +
    2 * (to.indexWrites - from.indexWrites) +
    // The ended index: an entry per job that ends, at the rate of the write that files it (1 unit by a plain write, 2 by
    // a transaction's item, as the holders entries above).
    (to.endedIndexWrites - from.endedIndexWrites) +
    2 * (to.endedIndexWritesInTransactions - from.endedIndexWritesInTransactions);
  const jobApi = sum((k) => k.startsWith('appflow.') || k.startsWith('glue.'));
  const events = sum((k) => k.startsWith('eventbridge.'));
  const lambda = to.acquirer - from.acquirer + (to.releaser - from.releaser) + (to.reconciler - from.reconciler);
  ops['lambda.acquirer'] = to.acquirer - from.acquirer;
  ops['lambda.releaser'] = to.releaser - from.releaser;
  if (to.reconciler > from.reconciler) ops['lambda.reconciler'] = to.reconciler - from.reconciler;
  const j = Math.max(1, jobs);
  return {
    sqs: r3(sqs / j),
    dynamodb: r3(dynamodb / j),
    dynamodbReads: r3(reads / j),
    dynamodbWrites: r3((dynamodb - reads) / j),
    dynamodbWriteUnits: r3(writeUnits / j),
    jobApi: r3(jobApi / j),
    lambda: r3(lambda / j),
    events: r3(events / j),
    total: r3((sqs + dynamodb + jobApi + lambda + events) / j),
    ops: Object.fromEntries(
      Object.entries(ops)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, n]) => [k, r3(n / j)]),
    ),
    emptyReceives: r3(empty / j),
  };
}

export interface Harness {
  stack: LocalStack;
  tracer: Tracer;
  endpoints: Endpoints;
  /** Run time of each flow / job name, read by the simulator when a run starts. */
  durations: Map<string, number>;
  /** The bench's own clients: their requests are not Sluice's and are not counted. */
  own: { sqs: SQSClient; doc: DynamoDBDocumentClient; dynamodb: DynamoDBClient };
  credentials: { accessKeyId: string; secretAccessKey: string };
  region: string;
  nameSuffix: string;
  /** The reconciler's period on the stack's compressed schedule (serverless.yml's rate x custom.local.timeScale). */
  reconcilePeriodMs: number;
  log: (line: string) => void;
  handlerErrors: Array<{ fn: string; error: string }>;
  /** Tells the simulator how long each job's run lasts (enqueue does it too). */
  register(jobs: readonly BenchJob[]): readonly BenchJob[];
  enqueue(jobs: readonly BenchJob[]): Promise<void>;
  runsOf(group: string): SimRun[];
  /** Requests and invocations so far; `reconciler`: only the calls of the reconciler runs the bench started. */
  snapshot(scope?: 'reconciler'): CountSnapshot;
  poolAdmin(): PoolAdmin;
  /** Sluice's lease store on the bench's own client: what it reads of pools and waiters is not counted. */
  leases: LeaseStore;
  /**
   * Waits until the pool holds no slot and the bus has nothing in flight. A pool stuck for a second gets a
   * reconciler run (counted in `healed`): a slot whose completion was lost (no event, or an acquirer that died after
   * the start) is only freed that way. An early completion is not: the acquirer finishes it when it records the run.
   */
  settle(pool: string, timeoutMs?: number): Promise<void>;
  /** Reconciler runs `settle` and `waitEnded` needed, by pool. */
  healed: Map<string, number>;
  /** What the reconciler put right so far, by drift (its report's counts summed over every run, periodic runs too). */
  reconcilerDrift: Map<string, number>;
  /**
   * Waits for `n` completions of a group, running the reconciler when nothing has completed for `stallMs` (a slot
   * whose completion was lost is only freed that way; counted in `healed`). For waits with no periodic reconciler
   * running.
   */
  waitEnded(group: string, n: number, pool: string, timeoutMs: number, stallMs?: number): Promise<void>;
  /** Runs the reconciler on its compressed schedule until the returned function is called. */
  reconcileEvery(periodMs: number): () => void;
  reconcileNow(): Promise<void>;
  stop(): Promise<void>;
}

export async function startHarness(options: HarnessOptions): Promise<Harness> {
  const durations = new Map<string, number>();
  let queueUrl = '';
  const tracer = new Tracer(() => queueUrl);
  // The reconciler runs the bench starts (benchScope 'reconciler'), counted apart: a release or an idle poll that
  // happens during a run is not the reconciler's cost. (With the functions in worker threads the calls are counted
  // there, all together: snapshot('reconciler') then gives every call.)
  const reconcilerRequests = new RequestCounter();
  const countReconciler = (client: unknown, service: string) =>
    countRequests(client, service, reconcilerRequests, { when: () => callerOf() === 'reconciler', name: 'sluiceBenchReconcilerCount' });
  const handlerErrors: Array<{ fn: string; error: string }> = [];
  const nameSuffix = options.nameSuffix ?? '';
  const stack = await startLocalStack({
    ...(options.endpoints ? { endpoints: options.endpoints } : {}),
    nameSuffix,
    ...(options.pollerConcurrency ? { pollerConcurrency: options.pollerConcurrency } : {}),
    schedules: false, // the bench runs the reconciler itself, only where it belongs (see reconcileEvery)
    // The functions' calls in worker threads reach the tracer as the calls of this thread's clients do.
    ...(options.functionWorkers ? { functionWorkers: options.functionWorkers, onWorkerCall: (call) => tracer.ingest(call) } : {}),
    env: {
      ...options.env,
      POOLS: JSON.stringify({ ...options.pools, ...Object.fromEntries((options.unlimitedPools ?? []).map((pool) => [pool, 'unlimited'])) }),
    },
    simulator: { durationMs: (_kind, name) => durations.get(name) ?? 1000, group: (_kind, name) => groupOf(name) },
    bus: { onDeliver: (attempt) => tracer.onDeliver(attempt) },
    // Sluice's clients are process-wide singletons: the same objects the stack, its pollers and the handlers use. Traced
    // before the pollers' first long poll: a call already in flight would not be seen (nor the jobs it receives).
    onClients: (clients) => {
      tracer.instrument(clients.sqs, 'sqs');
      tracer.instrument(clients.dynamodb, 'dynamodb');
      countReconciler(clients.sqs, 'sqs');
      countReconciler(clients.dynamodb, 'dynamodb');
      // The AppFlow and Glue clients, made by their starters on first use (before their first call).
      onJobApiClient((service, client) => {
        if (service === 'appflow' || service === 'glue') tracer.instrument(client, service);
        countReconciler(client, service);
      });
    },
    onHandlerError: (fn, error) => {
      if (handlerErrors.length < 100) handlerErrors.push({ fn, error: error instanceof Error ? error.message : String(error) });
    },
  });
  queueUrl = stack.queueUrl;
  const { container } = await import('../shared/runtime/container');

  const endpoints = options.endpoints ?? { sqs: process.env.AWS_ENDPOINT_URL_SQS!, dynamodb: process.env.AWS_ENDPOINT_URL_DYNAMODB! };
  const region = process.env.AWS_REGION ?? 'us-east-1';
  const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
  const dynamodb = new DynamoDBClient({ endpoint: endpoints.dynamodb, region, credentials });
  const own = {
    sqs: new SQSClient({ endpoint: endpoints.sqs, region, credentials, useQueueUrlAsEndpoint: false }),
    dynamodb,
    doc: DynamoDBDocumentClient.from(dynamodb),
  };
  const leases = new DynamoLeaseStore(own.doc, stack.tableName);
  const reconcilerRate = Object.values(stack.definition.functions)
    .flatMap((f) => f.events ?? [])
    .map((e) => (e as { schedule?: string | { rate: string } }).schedule)
    .find((s) => s !== undefined);
  const rate = typeof reconcilerRate === 'string' ? reconcilerRate : (reconcilerRate?.rate ?? 'rate(2 minutes)');
  const reconcilePeriodMs = Math.max(50, rateToMs(rate) * (stack.definition.custom?.local?.timeScale ?? 1));

  const sendBatch = async (chunk: BenchJob[]): Promise<void> => {
    let left = chunk;
    for (let attempt = 1; left.length > 0; attempt++) {
      const out = await own.sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: stack.queueUrl,
          Entries: left.map((job, j) => ({ Id: String(j), MessageBody: JSON.stringify(job.spec) })),
        }),
      );
      const failed = out.Failed ?? [];
      if (failed.length === 0) return;
      if (attempt === 5) throw new Error(`SendMessageBatch failed 5 times: ${failed.map((f) => `${f.Code}: ${f.Message ?? ''}`).join('; ')}`);
      options.log(`SendMessageBatch: ${failed.length} of ${left.length} entries failed (${failed[0]!.Code}); sending them again`);
      left = failed.map((f) => left[Number(f.Id)]!);
    }
  };

  let reconcilerInvocations = 0;
  const snapshot = (): CountSnapshot => ({
    at: Date.now(),
    ops: stack.requests.snapshot(),
    acquirer: stack.poller.stats.invocations,
    releaser: tracer.releaserInvocations(),
    reconciler: reconcilerInvocations,
    emptyReceives: tracer.emptyReceives,
    transactItems: tracer.transactItems,
    indexWrites: tracer.indexWrites,
    endedIndexWrites: tracer.endedIndexWrites,
    endedIndexWritesInTransactions: tracer.endedIndexWritesInTransactions,
  });
  // The tracer's counts are not by caller: a reconciler run writes (a transaction) only to put drift right, which the
  // report says of each run measured.
  const reconcilerSnapshot = (): CountSnapshot => ({
    at: Date.now(),
    ops: reconcilerRequests.snapshot(),
    acquirer: 0,
    releaser: 0,
    reconciler: reconcilerInvocations,
    emptyReceives: 0,
    transactItems: 0,
    indexWrites: 0,
    endedIndexWrites: 0,
    endedIndexWritesInTransactions: 0,
  });
  const reconcilerDrift = new Map<string, number>();
  let reconciling: Promise<void> | undefined;
  const reconcileNow = () => {
    reconciling ??= (async () => {
      reconcilerInvocations++;
      try {
        // In a scope of its own: the capacity meter counts the reconciler's units apart from the job path.
        const report = await benchScope.run('reconciler', () => stack.reconcileNow());
        for (const [drift, n] of Object.entries(report?.drift ?? {}))
          reconcilerDrift.set(drift, (reconcilerDrift.get(drift) ?? 0) + (n ?? 0));
      } catch (error) {
        handlerErrors.push({ fn: 'reconciler', error: String(error) });
      } finally {
        reconciling = undefined;
      }
    })();
    return reconciling;
  };

  // Every pool exists before any job arrives: a burst of first jobs racing to create a pool is a one-off that the
  // bench does not measure (see the report).
  for (const [pool, limit] of Object.entries(options.pools)) await container().poolAdmin.setLimit(pool, limit);
  stack.requests.reset();

  const harness: Harness = {
    stack,
    tracer,
    endpoints,
    durations,
    own,
    credentials,
    region,
    nameSuffix,
    reconcilePeriodMs,
    log: options.log,
    handlerErrors,
    register(jobs) {
      for (const job of jobs) durations.set(job.name, job.durationMs);
      return jobs;
    },
    async enqueue(jobs) {
      harness.register(jobs);
      const chunks: BenchJob[][] = [];
      for (let i = 0; i < jobs.length; i += 10) chunks.push(jobs.slice(i, i + 10) as BenchJob[]);
      // In order, a few batches at a time: arrival order stays close to the workload's order. An entry SQS reports
      // failed is sent again (a scenario waiting for every job would otherwise wait for one that was never sent).
      for (let i = 0; i < chunks.length; i += 4) await Promise.all(chunks.slice(i, i + 4).map((chunk) => sendBatch(chunk)));
    },
    runsOf: (group) => stack.simulator.runs().filter((r) => r.group === group),
    snapshot: (scope) => (scope === 'reconciler' && !options.functionWorkers ? reconcilerSnapshot() : snapshot()),
    poolAdmin: () => container().poolAdmin,
    leases,
    async settle(pool, timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      let last = -1;
      let since = Date.now();
      for (;;) {
        await stack.bus.drain();
        const item = await leases.getPool(pool);
        if (!item || item.inUse === 0) {
          await stack.bus.drain();
          return;
        }
        if (item.inUse !== last) [last, since] = [item.inUse, Date.now()];
        else if (Date.now() - since > 1000) {
          harness.healed.set(pool, (harness.healed.get(pool) ?? 0) + 1);
          await reconcileNow();
          since = Date.now();
        }
        if (Date.now() > deadline) throw new Error(`pool ${pool} did not settle: ${item.inUse} slots held`);
        await sleep(50);
      }
    },
    healed: new Map(),
    reconcilerDrift,
    async waitEnded(group, n, pool, timeoutMs, stallMs = 2000) {
      const deadline = Date.now() + timeoutMs;
      while (tracer.endedCount(group) < n) {
        const before = tracer.endedCount(group);
        const wait = Math.min(stallMs, Math.max(1, deadline - Date.now()));
        await tracer.waitEnded(group, Math.min(n, before + 1), wait).catch(() => undefined);
        if (tracer.endedCount(group) >= n) return;
        if (Date.now() >= deadline)
          throw new Error(`timed out after ${timeoutMs} ms: ${tracer.endedCount(group)}/${n} runs of ${group} ended`);
        if (tracer.endedCount(group) === before) {
          harness.healed.set(pool, (harness.healed.get(pool) ?? 0) + 1);
          await reconcileNow();
        }
      }
    },
    reconcileEvery(periodMs) {
      const timer = setInterval(() => void reconcileNow(), periodMs);
      return () => clearInterval(timer);
    },
    reconcileNow,
    async stop() {
      await reconciling;
      own.sqs.destroy();
      own.dynamodb.destroy();
      await stack.stop();
    },
  };
  return harness;
}

/** Drifts whose correction frees a held slot (the others resend a wake-up or a start, or fill a free slot). */
const SLOT_FREEING_DRIFTS: readonly string[] = [Drift.LostEvent, Drift.KeptSlotFreed, Drift.Revoked, Drift.RunGone, Drift.DeadlinePassed];

/** Slots the reconciler has freed so far (subtract an earlier value to get a window's). */
export function slotsFreedByReconciler(h: Pick<Harness, 'reconcilerDrift'>): number {
  return SLOT_FREEING_DRIFTS.reduce((sum, drift) => sum + (h.reconcilerDrift.get(drift) ?? 0), 0);
}

/** What the reconciler put right since `before` (a copy of `reconcilerDrift` taken then), by drift; zeros left out. */
export function driftSince(h: Pick<Harness, 'reconcilerDrift'>, before: ReadonlyMap<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [drift, n] of h.reconcilerDrift) if (n - (before.get(drift) ?? 0) > 0) out[drift] = n - (before.get(drift) ?? 0);
  return out;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Polls `check` until it is true; fails with `what` after `timeoutMs`. */
export async function waitUntil(what: string, check: () => Promise<boolean> | boolean, timeoutMs: number, intervalMs = 100): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(intervalMs);
  }
}
