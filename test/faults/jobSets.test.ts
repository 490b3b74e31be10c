import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { EventBridgeEvent } from 'aws-lambda';
import type { LocalStack } from '../../local/stack';
import { setJobId } from '../../shared/domain/jobSets';
import { NOTIFY_GRACE_MS } from '../../shared/app/jobSets';
import { loadJobSets } from '../../shared/config/jobSetsFile';
import { InvocationAbandonedError } from '../../shared/errors';
import { currentInvocation, DiscardCondition, type AsyncEvent, type InvocationRecord } from '../../local/lambda';
import { SLUICE_EVENT_SOURCE, SluiceDetailType } from '../../shared/ports/eventPublisher';
import { expectEveryJobRanOnce, jobRecord } from '../support/invariants';
import { drainQueue } from '../support/testStack';
import { waitFor } from '../support/waitFor';
import { startFaultStack } from './workload';

/**
 * Job sets under faults, on the whole local stack, with the jobSets function invoked as EventBridge Scheduler invokes
 * it: asynchronously, Lambda retrying a fire that fails or times out as serverless.yml configures the function (2
 * retries, 1 and 2 minutes apart, compressed by timeScale), then recording it in the job set failures queue. A fire
 * that dies part way (after its run's item is written and some of its jobs are sent) or times out mid-flight still
 * runs every job once, and its run completes with its event. With the retries turned off, the same failure leaves the
 * run without its last jobs, for good: the retries are what saves it.
 */
const POOL = 'setfault';
const LIMIT = 3;
const JOBS = 24;

type Completed = EventBridgeEvent<string, { set: string; run: string; total: number; succeeded: number; failed: number }>;

let stack: LocalStack;
let dir: string;
let file: string;
const completed: Completed[] = [];
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'sluice-set-faults-'));
  file = path.join(dir, 'jobs.yml');
  const jobs = Array.from({ length: JOBS }, (_, i) => `      - { kind: appflow, flowName: ${POOL}--${i}--150ms, key: f${i} }`).join('\n');
  await writeFile(file, `sets:\n  - name: nightly\n    schedule: cron(0 2 * * ? *)\n    pool: ${POOL}\n    jobs:\n${jobs}\n`);
  stack = await startFaultStack({ [POOL]: LIMIT }, { env: { JOB_SETS_FILE: file } });
  stack.bus.addRule({
    name: 'test-set-runs',
    pattern: { source: [SLUICE_EVENT_SOURCE], 'detail-type': [SluiceDetailType.SetRunCompleted] },
    target: async (event) => void completed.push(event as Completed),
  });
}, 60_000);
afterAll(async () => {
  await stack?.stop();
  await rm(dir, { recursive: true, force: true });
});

const idsOf = (run: string) => loadJobSets(file)[0]!.jobs.map((job) => setJobId('nightly', run, job.key));
/** The jobSets events Lambda took since `before` (the length of its events list then). */
function lambdaEventsFor(before: number): AsyncEvent[] {
  return stack.lambda
    .events()
    .slice(before)
    .filter((e) => e.functionName === 'jobSets');
}

/** Middleware on the functions' SQS client: the jobSets function's SendMessageBatch calls, numbered from 1. */
function onBatches(name: string, onCall: (call: number, next: () => Promise<unknown>) => Promise<unknown>): () => void {
  let calls = 0;
  const { sqs } = stack;
  sqs.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName !== 'SendMessageBatchCommand' || currentInvocation()?.functionName !== 'jobSets') return next(args);
      return onCall(++calls, () => next(args)) as never;
    },
    { step: 'initialize', name },
  );
  return () => sqs.middlewareStack.remove(name);
}

/**
 * The run's completion event. Its sender may die (or time out, on a loaded machine) after writing the run complete and
 * before announcing it: the reconciler's sweep sends it again once NOTIFY_GRACE_MS has passed, so the wait outlasts
 * that grace by a minute of sweeps.
 */
async function completionOf(run: string): Promise<Completed> {
  return waitFor(`the completion event of run ${run}`, () => completed.find((e) => e.detail.run === run), NOTIFY_GRACE_MS + 60_000);
}

test('a schedule firing twice at once for the same time: every job once, the limit held', async () => {
  const at = '2026-11-27T02:00:00Z';
  await Promise.all([stack.fireJobSet('nightly', at), stack.fireJobSet('nightly', at)]);
  await expectEveryJobRanOnce(stack, { pool: POOL, limit: LIMIT, ids: idsOf('20261127T0200Z') });
  expect((await completionOf('20261127T0200Z')).detail).toMatchObject({ total: JOBS, succeeded: JOBS, failed: 0 });
}, 210_000);

test('a fire that dies after its run is written and 2 of its 3 batches are sent: Lambda retries it, every job runs once, the run completes', async () => {
  const before = stack.lambda.events().length;
  let failedOnce = false;
  const remove = onBatches('sluiceSetDies', async (call, next) => {
    if (call <= 2 || failedOnce) return next();
    failedOnce = true;
    throw new Error('fault injection: the jobSets function died after 2 batches');
  });
  try {
    // the retry's value: it found the run already written (created: false) and sent every job again
    expect(await stack.fireJobSet('nightly', '2026-11-28T02:00:00Z')).toMatchObject({ run: '20261128T0200Z', jobs: JOBS, created: false });
  } finally {
    remove();
  }
  const [event] = lambdaEventsFor(before);
  expect(event!.attempts.map((a) => a.outcome)).toEqual(['function-error', 'succeeded']);
  expect(event!.attempts[0]!.error).toContain('died after 2 batches');
  // Lambda waited a minute (compressed) before the retry
  const timeScale = stack.definition.custom!.local!.timeScale!;
  expect(event!.attempts[1]!.startedAt - event!.attempts[0]!.endedAt).toBeGreaterThanOrEqual(60_000 * timeScale - 5);
  await expectEveryJobRanOnce(stack, { pool: POOL, limit: LIMIT, ids: idsOf('20261128T0200Z') });
  expect((await completionOf('20261128T0200Z')).detail).toMatchObject({ set: 'nightly', total: JOBS, succeeded: JOBS, failed: 0 });
  expect(stack.lambda.failures().filter((f) => f.functionName === 'jobSets')).toEqual([]);
}, 210_000);

test('a fire that times out mid-flight is abandoned (its held call never reaches SQS), retried, and every job runs once', async () => {
  const before = stack.lambda.events().length;
  const refused: unknown[] = [];
  let held = false;
  // The first attempt's third batch hangs until the invocation is abandoned, then tries to go on.
  const remove = onBatches('sluiceSetHangs', async (call, next) => {
    const scope = currentInvocation()!;
    if (call !== 3 || held) return next();
    held = true;
    await new Promise((resolve) => scope.signal.addEventListener('abort', resolve, { once: true }));
    try {
      return await next();
    } catch (error) {
      refused.push(error);
      throw error;
    }
  });
  stack.lambda.faults.timeOutNext('jobSets', 1_500);
  try {
    expect(await stack.fireJobSet('nightly', '2026-11-29T02:00:00Z')).toMatchObject({ run: '20261129T0200Z', created: false });
  } finally {
    remove();
  }
  const [event] = lambdaEventsFor(before);
  expect(event!.attempts.map((a) => [a.outcome, a.timedOut ?? false])).toEqual([
    ['function-error', true],
    ['succeeded', false],
  ]);
  expect(event!.attempts[0]!.error).toContain('Task timed out after 1.50 seconds');
  expect(refused).toHaveLength(1);
  expect(refused[0]).toBeInstanceOf(InvocationAbandonedError);
  await expectEveryJobRanOnce(stack, { pool: POOL, limit: LIMIT, ids: idsOf('20261129T0200Z') });
  expect((await completionOf('20261129T0200Z')).detail).toMatchObject({ total: JOBS, succeeded: JOBS });
}, 210_000);

test('without the retries (maximumRetryAttempts 0), the same failure is recorded in the failures queue and the run never gets its last jobs', async () => {
  const before = stack.lambda.events().length;
  const failureQueue = stack.refs.ref.JobSetFailureQueue!;
  stack.lambda.configure('jobSets', { maximumRetryAttempts: 0 });
  let failedOnce = false;
  const remove = onBatches('sluiceSetDiesForGood', async (call, next) => {
    if (call <= 2 || failedOnce) return next();
    failedOnce = true;
    throw new Error('fault injection: the jobSets function died after 2 batches');
  });
  try {
    await expect(stack.fireJobSet('nightly', '2026-11-30T02:00:00Z')).rejects.toThrow('died after 2 batches');
  } finally {
    remove();
    stack.lambda.configure('jobSets', { maximumRetryAttempts: 2 });
  }
  expect(lambdaEventsFor(before).map((e) => [e.attempts.length, e.outcome])).toEqual([[1, DiscardCondition.RetriesExhausted]]);
  const seen: InvocationRecord[] = [];
  const record = await waitFor('the invocation record in the failures queue', async () => {
    seen.push(...(await drainQueue(stack, failureQueue)).map((m) => JSON.parse(m.body) as InvocationRecord));
    return seen.find((r) => (r.requestPayload as { scheduledTime?: string }).scheduledTime === '2026-11-30T02:00:00Z');
  });
  expect(record).toMatchObject({
    requestContext: { condition: 'RetriesExhausted', approximateInvokeCount: 1 },
    requestPayload: { set: 'nightly', scheduledTime: '2026-11-30T02:00:00Z' },
    responseContext: { functionError: 'Unhandled' },
    responsePayload: { errorMessage: expect.stringContaining('died after 2 batches') },
  });
  // 20 jobs were sent and run; the last 4 never were, and the run stays open
  const ids = idsOf('20261130T0200Z');
  const records = await waitFor(
    'the 20 jobs sent to end',
    async () => {
      const all = await Promise.all(ids.map((id) => jobRecord(stack, id)));
      return all.filter((r) => r?.state === 'succeeded').length === 20 ? all : undefined;
    },
    30_000,
  );
  expect(records.filter((r) => r === undefined)).toHaveLength(4);
  await stack.reconcileNow();
  expect(completed.some((e) => e.detail.run === '20261130T0200Z')).toBe(false);
}, 210_000);
