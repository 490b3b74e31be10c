import { AsyncLocalStorage } from 'node:async_hooks';
import { GetQueueAttributesCommand, SendMessageCommand, SetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import type { ReconcileReport } from '../../shared/app/reconcile';
import { rateToMs } from '../../local/infra/schedule';
import type { LocalStack } from '../../local/stack';
import { container } from '../../shared/runtime/container';
import { jobState, poolItem, testClients } from './testStack';
import { waitFor } from './waitFor';

/**
 * Probes into a running local stack for the bad-input, lifecycle and fault tests: raw sends, who received what, the
 * whole table, the reconciler's period. They use the test's own clients, or watch the stack's clients without
 * changing what they do.
 */

/** Sends a body as is (no schema check, unlike enqueue) to the job queue; returns the SQS message id. */
export async function sendRaw(stack: LocalStack, body: string, queueUrl = stack.queueUrl): Promise<string> {
  const { MessageId } = await testClients(stack).sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: body }));
  return MessageId!;
}

/** Sets the job queue's redrive policy (to the stack's DLQ) to `maxReceiveCount`. */
export async function setMaxReceiveCount(stack: LocalStack, maxReceiveCount: number): Promise<void> {
  const deadLetterTargetArn = stack.refs.arn.DeadLetterQueue;
  if (!deadLetterTargetArn) throw new Error('the stack has no DeadLetterQueue');
  await testClients(stack).sqs.send(
    new SetQueueAttributesCommand({
      QueueUrl: stack.queueUrl,
      Attributes: { RedrivePolicy: JSON.stringify({ deadLetterTargetArn, maxReceiveCount }) },
    }),
  );
}

/**
 * Sets the job queue's visibility timeout for the duration of `work`, then puts the old one back. Locally it is 4 s
 * (compressed, so that crashed acquirers' messages come back fast), and no function timeout cuts an invocation short as
 * Lambda's would: on a busy machine a batch can take longer than that, and its messages are received again. A test that
 * counts receives (a message received once, none redriven with maxReceiveCount 1) runs with a longer one.
 */
export async function withVisibilityTimeout<T>(stack: LocalStack, seconds: number, work: () => Promise<T>): Promise<T> {
  const { sqs } = testClients(stack);
  const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: stack.queueUrl, AttributeNames: ['VisibilityTimeout'] }));
  const set = (value: string) =>
    sqs.send(new SetQueueAttributesCommand({ QueueUrl: stack.queueUrl, Attributes: { VisibilityTimeout: value } }));
  await set(String(seconds));
  try {
    return await work();
  } finally {
    await set(Attributes!.VisibilityTimeout!);
  }
}

export interface DeliveryWatch {
  /** How often the stack's acquirer was handed the SQS message with this id. */
  count(messageId: string): number;
  /** How often each message handed to the acquirer was handed to it, one entry per message. */
  counts(): number[];
  /** The errors the acquirer failed messages with (the message then comes back after the visibility timeout). */
  errors(): unknown[];
  stop(): void;
}

/**
 * Counts the job messages the stack's acquirer processes, by SQS message id: each receive of a message is one
 * invocation for it, so a count of 1 means it was received once and never retried. (Wraps the acquirer in the
 * handlers' container: an SDK middleware would miss the long polls already in flight when it was added.)
 */
export function watchDeliveries(): DeliveryWatch {
  const counts = new Map<string, number>();
  const errors: unknown[] = [];
  const { acquirer } = container();
  const process = acquirer.process;
  acquirer.process = async (message) => {
    counts.set(message.messageId, (counts.get(message.messageId) ?? 0) + 1);
    try {
      return await process.call(acquirer, message);
    } catch (error) {
      errors.push(error);
      throw error;
    }
  };
  return {
    count: (id) => counts.get(id) ?? 0,
    counts: () => [...counts.values()],
    errors: () => [...errors],
    stop: () => {
      acquirer.process = process;
    },
  };
}

let watchCounter = 0;

export interface CapturedSend {
  body: string;
  attributes: Record<string, string>;
}

/** Records what the stack's own SQS client sends to `queueUrl` (as the request is made, whether SQS accepts it or not). */
export function captureSends(stack: LocalStack, queueUrl: string): { sends(): CapturedSend[]; stop(): void } {
  const sends: CapturedSend[] = [];
  const name = `testCaptureSends${++watchCounter}`;
  stack.sqs.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { QueueUrl?: string; MessageBody?: string; MessageAttributes?: Record<string, { StringValue?: string }> };
      if (context.commandName === 'SendMessageCommand' && input.QueueUrl === queueUrl) {
        sends.push({
          body: input.MessageBody ?? '',
          attributes: Object.fromEntries(Object.entries(input.MessageAttributes ?? {}).map(([k, v]) => [k, v.StringValue ?? ''])),
        });
      }
      return next(args);
    },
    { step: 'initialize', name },
  );
  return { sends: () => [...sends], stop: () => void stack.sqs.middlewareStack.remove(name) };
}

/** Counts DynamoDB writes of the stack refused with ConditionalCheckFailedException (lost races, repeated moves). */
export function countConditionalFailures(stack: LocalStack): { count(): number; stop(): void } {
  let count = 0;
  const name = `testConditionalFailures${++watchCounter}`;
  stack.dynamodb.middlewareStack.add(
    (next) => async (args) => {
      try {
        return await next(args);
      } catch (error) {
        // A single write's failed condition, or a transaction cancelled by one (most slot changes are transactions).
        const { name: errorName, CancellationReasons } = error as { name?: string; CancellationReasons?: Array<{ Code?: string }> };
        if (errorName === 'ConditionalCheckFailedException') count++;
        else if (errorName === 'TransactionCanceledException' && CancellationReasons?.some((r) => r.Code === 'ConditionalCheckFailed'))
          count++;
        throw error;
      }
    },
    { step: 'initialize', name },
  );
  return { count: () => count, stop: () => void stack.dynamodb.middlewareStack.remove(name) };
}

/** Every item of the stack's table, sorted by key, for before/after comparisons. */
export async function scanTable(stack: LocalStack): Promise<Array<Record<string, unknown>>> {
  const items: Array<Record<string, unknown>> = [];
  let ExclusiveStartKey: Record<string, unknown> | undefined;
  do {
    const page = await testClients(stack).doc.send(
      new ScanCommand({ TableName: stack.tableName, ConsistentRead: true, ExclusiveStartKey }),
    );
    items.push(...(page.Items ?? []));
    ExclusiveStartKey = page.LastEvaluatedKey;
  } while (ExclusiveStartKey);
  const key = (item: Record<string, unknown>) => `${String(item.pk)}\u0000${String(item.sk)}`;
  return items.sort((a, b) => key(a).localeCompare(key(b)));
}

/** The reconciler's period on this stack: its schedule's rate times the local time scale (2 minutes x 0.02 = 2.4 s). */
export function reconcilePeriodMs(stack: LocalStack): number {
  for (const fn of Object.values(stack.definition.functions)) {
    for (const event of fn.events ?? []) {
      if (!('schedule' in event)) continue;
      const rate = typeof event.schedule === 'string' ? event.schedule : (event.schedule as { rate: string }).rate;
      return rateToMs(rate) * (stack.definition.custom?.local?.timeScale ?? 1);
    }
  }
  throw new Error('serverless.yml has no scheduled function');
}

/** One run of the reconciler in this thread (scheduled or driven by a test): when it began and ended, and its report. */
export interface ReconcilerPass {
  startedAt: number;
  endedAt: number;
  report: ReconcileReport;
  /** The ledger states of the jobs watchStatesBeforePasses names, read just before the pass began. */
  statesBefore?: Record<string, string | undefined>;
}

interface ReconcilerWatch {
  /** pauseReconciler() calls not yet resumed */
  paused: number;
  /** real passes, in the order they ended */
  passes: ReconcilerPass[];
  /** jobs whose states are read before each pass */
  statesOf?: { stack: LocalStack; ids: readonly string[] };
}

const EMPTY_REPORT: ReconcileReport = { pools: 0, holdersChecked: 0, unfinished: 0, drift: {} };
const watches = new WeakMap<object, ReconcilerWatch>();
/** Marks a pass a test drives (reconcilePass): it runs even while the schedule is paused. */
const driven = new AsyncLocalStorage<true>();

/**
 * Wraps the reconciler of this thread's container once: every real pass is recorded, and while a pauseReconciler() is
 * in force the scheduled invocations do nothing (each returns an empty report) but passes a test drives still run.
 * startPoolStack installs it as the stack starts, so every pass is seen.
 */
function watchReconciler(): ReconcilerWatch {
  const { reconciler } = container();
  const existing = watches.get(reconciler);
  if (existing) return existing;
  const watch: ReconcilerWatch = { paused: 0, passes: [] };
  const run = reconciler.run.bind(reconciler);
  reconciler.run = async (): Promise<ReconcileReport> => {
    if (watch.paused > 0 && !driven.getStore()) return { ...EMPTY_REPORT, drift: {} };
    const statesOf = watch.statesOf;
    const statesBefore =
      statesOf && Object.fromEntries(await Promise.all(statesOf.ids.map(async (id) => [id, await jobState(statesOf.stack, id)] as const)));
    const startedAt = Date.now();
    const report = await run();
    watch.passes.push({ startedAt, endedAt: Date.now(), report, ...(statesBefore && { statesBefore }) });
    return report;
  };
  watches.set(reconciler, watch);
  return watch;
}

/**
 * Stops the scheduled reconciler from doing anything until the returned function is called (calling it again does
 * nothing), so a test can show that a path works without the safety net, or drive the reconciler itself with
 * reconcilePass. The schedule still fires; each of its runs returns an empty report.
 */
export function pauseReconciler(): () => void {
  const watch = watchReconciler();
  watch.paused++;
  let resumed = false;
  return () => {
    if (resumed) return;
    resumed = true;
    watch.paused--;
  };
}

/** One reconciler invocation now, as the schedule makes it (loader first), even while the schedule is paused. */
export async function reconcilePass(stack: LocalStack): Promise<ReconcileReport> {
  watchReconciler();
  return driven.run(true, () => stack.reconcileNow());
}

/** A pass that visited every holder of every pool (see fullPassSince). */
const isFull = (watch: ReconcilerWatch, pass: ReconcilerPass) => {
  if (pass.report.unfinished > 0) return false;
  const before = watch.passes.filter((other) => other.endedAt <= pass.startedAt).at(-1);
  return !before || before.report.unfinished === 0;
};

/**
 * The first pass that began at or after `since` and visited every holder of every pool: it checked them all within its
 * budget (nothing unfinished), and the pass before it left nothing unfinished either, so it began each pool from its
 * first holder rather than where an earlier pass stopped.
 */
function fullPassSince(watch: ReconcilerWatch, since: number): ReconcilerPass | undefined {
  return watch.passes.find((pass) => pass.startedAt >= since && isFull(watch, pass));
}

/** Functions in worker threads run a reconciler this thread cannot watch: the test drives its passes there. */
const watchable = (stack: LocalStack) => Object.keys(stack.functionThreads).length === 0;

/** Starts recording the reconciler's passes of a stack whose functions run in this thread (startPoolStack does). */
export function watchReconcilerOf(stack: LocalStack): void {
  if (watchable(stack)) watchReconciler();
}

/**
 * Reads the ledger states of these jobs just before each reconciler pass begins, and keeps them with the pass
 * (statesBefore): what the pass could see, without guessing from timestamps when a write landed.
 */
export function watchStatesBeforePasses(stack: LocalStack, ids: readonly string[]): void {
  if (watchable(stack)) watchReconciler().statesOf = { stack, ids };
}

/**
 * The full passes (see fullPassSince) recorded so far that began at or after `since`, in the order they ended; empty
 * for a stack whose functions run in worker threads.
 */
export function fullPassesSince(stack: LocalStack, since: number): ReconcilerPass[] {
  if (!watchable(stack)) return [];
  const watch = watchReconciler();
  return watch.passes.filter((pass) => pass.startedAt >= since && isFull(watch, pass));
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)));

/**
 * A slot leaks if the reconciler looks and leaves it held. Waits until the pool holds no slot (inUse 0 and no holder),
 * and fails if it still holds one once two full reconciler passes that began after `settledAt` (epoch ms: when the
 * last run ended, or when the last slot became Sluice's to give back) and the stack's indexLagMs (a slot taken just
 * before may be missing from a lagging index's answer) have ended: on AWS, within two reconcile periods.
 * Two, not one: the ledger's times are taken just before their writes, so the first pass may have read a record a
 * moment before the write that made its slot Sluice's to give back landed. Causal, not timed: a slow machine makes the
 * passes come later, never makes a leak pass or a good pool fail. While the schedule is paused, or runs in worker
 * threads this thread cannot watch, the test drives the passes itself. `timeoutMs` bounds only the wait for them.
 */
export async function waitForPoolIdle(
  stack: LocalStack,
  pool: string,
  settledAt: number,
  { timeoutMs = 60_000 }: { timeoutMs?: number } = {},
): Promise<void> {
  const watch = watchable(stack) ? watchReconciler() : undefined;
  const deadline = Date.now() + timeoutMs;
  const driven: ReconcilerPass[] = [];
  // A pass reads the holders index: a slot taken up to indexLagMs before it began may be missing from its read.
  const from = settledAt + stack.indexLagMs;
  for (;;) {
    // The passes are looked for before the pool is read: a pass found here ended before the read.
    const passes = watch ? watch.passes.filter((pass) => pass.startedAt >= from && isFull(watch, pass)) : driven;
    const item = await poolItem(stack, pool);
    if (item !== undefined && item.inUse === 0 && Object.keys(item.holders ?? {}).length === 0) return;
    if (passes.length >= 2)
      throw new Error(
        `pool ${pool} still holds a slot after two full reconciler passes that began after it settled ` +
          `(${JSON.stringify(passes.slice(0, 2).map((p) => ({ after: p.startedAt - settledAt, ...p.report, statesBefore: undefined })))}); ` +
          `pool was ${JSON.stringify(item)}`,
      );
    if (Date.now() > deadline)
      throw new Error(
        `${passes.length} full reconciler pass(es) began after ${new Date(settledAt).toISOString()} and ended within ${timeoutMs} ms; ` +
          `pool ${pool} holds a slot: ${JSON.stringify(item)}`,
      );
    if (watch && watch.paused === 0) {
      await sleep(25);
      continue;
    }
    // No scheduled pass to wait for: drive one that begins after settledAt (a watched one is recorded in watch.passes).
    await sleep(from - Date.now() + 1);
    const startedAt = Date.now();
    const report = watch ? await reconcilePass(stack) : await stack.reconcileNow();
    if (!watch && report.unfinished === 0) driven.push({ startedAt, endedAt: Date.now(), report });
  }
}

/**
 * Waits until a full reconciler pass (see waitForPoolIdle) that began at or after `since` has ended, and returns it: by
 * the schedule, or driven by the test while the schedule is paused or runs in worker threads.
 */
export async function fullReconcilerPass(stack: LocalStack, since: number, timeoutMs = 60_000): Promise<ReconcilerPass> {
  const watch = watchable(stack) ? watchReconciler() : undefined;
  return waitFor(
    `a full reconciler pass that began after ${new Date(since).toISOString()}`,
    async () => {
      const pass = watch && fullPassSince(watch, since);
      if (pass) return pass;
      if (Date.now() < since || (watch && watch.paused === 0)) return undefined;
      const startedAt = Date.now();
      const report = watch ? await reconcilePass(stack) : await stack.reconcileNow();
      return watch ? fullPassSince(watch, since) : report.unfinished === 0 ? { startedAt, endedAt: Date.now(), report } : undefined;
    },
    timeoutMs,
    25,
  );
}

export interface CompletionHold {
  /** Completions held now (each delivery of one counts), by execution id. */
  held(): string[];
  /** Lets the held completions through, and every later one. */
  release(): void;
}

/**
 * Holds back, at the stack's releaser, the completions of the runs `holds` picks (by the run's flow or job name) until
 * release(): as EventBridge delivering their events late would. With the reconciler paused as well (pauseReconciler),
 * their slots stay taken for exactly as long as the test says, whatever the machine's speed. Release before the test
 * ends (a finally): a held invocation waits until then.
 */
export function holdCompletions(holds: (completion: { kind: string; executionId: string; name: string }) => boolean): CompletionHold {
  const { completeRun } = container();
  const complete = completeRun.complete;
  const held: string[] = [];
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  let released = false;
  completeRun.complete = async (completion, known) => {
    if (!released && holds(completion)) {
      held.push(completion.executionId);
      await opened;
    }
    return complete.call(completeRun, completion, known);
  };
  return {
    held: () => [...held],
    release() {
      if (released) return;
      released = true;
      open();
    },
  };
}

/**
 * Holds back the events put on the stack's bus that `holds` picks (the job APIs' completion events, say) until
 * release(), then puts them as they came: as EventBridge delivering them late would. For stacks whose functions run in
 * worker threads, where holdCompletions cannot reach the releaser. Release before the test ends (a finally).
 */
export function holdBusEvents(stack: LocalStack, holds: (event: { source?: string; 'detail-type'?: string }) => boolean): CompletionHold {
  const { bus } = stack;
  const put = bus.put;
  const held: Array<Parameters<typeof put>[0]> = [];
  let released = false;
  bus.put = (input) => {
    if (released || !holds(input)) return put.call(bus, input);
    held.push(structuredClone(input));
    // What PutEvents answers: the event is accepted; its deliveries come later.
    return { ...input, id: input.id ?? `held-${held.length}` } as ReturnType<typeof put>;
  };
  return {
    held: () => held.map((input) => String(input.id)),
    release() {
      if (released) return;
      released = true;
      bus.put = put;
      for (const input of held.splice(0)) put.call(bus, input);
    },
  };
}

export interface RequestTally {
  /** DynamoDB and SQS requests the stack's functions made for jobs: in the acquirer's and the releaser's work. */
  jobPath(): number;
  /**
   * Runs `work` and counts the DynamoDB and SQS requests the reconciler's own pass made in it (not the loader's), with
   * each request's input as JSON.
   */
  inReconciler<T>(work: () => Promise<T>): Promise<{ value: T; requests: number; inputs: string[] }>;
  stop(): void;
}

let tallyCounter = 0;

/**
 * Counts the stack's DynamoDB and SQS requests by what they were made for, not by when: the job path (each message's
 * acquirer invocation and each completion's release, hand-offs included) apart from the scheduled functions, whose
 * runs add requests in proportion to the time a test takes, and so to the machine's load; and a reconciler pass on its
 * own. Functions in this thread.
 */
export function tallyRequests(stack: LocalStack): RequestTally {
  const bucket = new AsyncLocalStorage<{ requests: number }>();
  const reconciling = new AsyncLocalStorage<true>();
  const jobs = { requests: 0 };
  let pass: { requests: number; inputs: string[] } | undefined;
  const name = `testTally${++tallyCounter}`;
  const middleware = (next: (args: unknown) => Promise<unknown>) => async (args: unknown) => {
    if (reconciling.getStore()) {
      if (pass) {
        pass.requests++;
        pass.inputs.push(JSON.stringify((args as { input?: unknown }).input ?? {}));
      }
    } else {
      const counting = bucket.getStore();
      if (counting) counting.requests++;
    }
    return next(args);
  };
  type Stack = { add(m: typeof middleware, options: { step: 'initialize'; name: string }): void };
  for (const client of [stack.dynamodb, stack.sqs])
    (client.middlewareStack as unknown as Stack).add(middleware, { step: 'initialize', name });
  const { acquirer, completeRun, reconciler } = container();
  const process = acquirer.process;
  const complete = completeRun.complete;
  const run = reconciler.run;
  acquirer.process = (message) => bucket.run(jobs, () => process.call(acquirer, message));
  completeRun.complete = (completion, known) => bucket.run(jobs, () => complete.call(completeRun, completion, known));
  reconciler.run = () => reconciling.run(true, () => run.call(reconciler));
  return {
    jobPath: () => jobs.requests,
    async inReconciler(work) {
      const counting = { requests: 0, inputs: [] as string[] };
      pass = counting;
      try {
        return { value: await work(), requests: counting.requests, inputs: counting.inputs };
      } finally {
        pass = undefined;
      }
    },
    stop() {
      acquirer.process = process;
      completeRun.complete = complete;
      reconciler.run = run;
      stack.dynamodb.middlewareStack.remove(name);
      stack.sqs.middlewareStack.remove(name);
      // Off Node's list of storages every promise visits (see dynamoWorld's close).
      bucket.disable();
      reconciling.disable();
    },
  };
}

/** Samples a pool while a test runs and keeps the largest `inUse` seen (a monitor, not a synchronisation). */
export function samplePool(stack: LocalStack, pool: string, everyMs = 20): { maxInUse(): number; stop(): Promise<void> } {
  let max = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const item = await poolItem(stack, pool).catch(() => undefined);
      if (item) max = Math.max(max, item.inUse, Object.keys(item.holders ?? {}).length);
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  })();
  return {
    maxInUse: () => max,
    async stop() {
      running = false;
      await loop;
    },
  };
}
