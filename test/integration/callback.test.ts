import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { main } from '../../shared/cli/main';
import { reportMessage } from '../../shared/kinds/callback/reports';
import { tokenOf } from '../../shared/kinds/callback/token';
import type { LocalStack } from '../../local/stack';
import { jobRecord } from '../support/invariants';
import { enqueue, poolItem, queueDepth, startTestStack, testClients } from '../support/testStack';
import { waitFor } from '../support/waitFor';

/**
 * Callback jobs through the whole local stack: the acquirer sends the start (an async invoke the simulator takes as
 * the user's system), the system reports through the real channels (a `sluice.callback` event on the bus, or a message
 * on the callback queue, as `sluice complete` sends it) to the callbacks function, and the reconciler ends a silent
 * run at its deadline. Names starting `slow-` run for ten minutes (they end only by a report or a deadline).
 */

let stack: LocalStack;
beforeAll(async () => {
  stack = await startTestStack({
    env: { POOLS: JSON.stringify({ default: 4, cb1: 1 }) },
    simulator: { durationMs: (_kind, name) => (name.startsWith('slow-') ? 600_000 : 100) },
    schedules: false,
  });
}, 60_000);
afterAll(() => stack?.stop());

const spec = (id: string, name: string, more: Record<string, unknown> = {}) => ({
  kind: 'callback',
  id,
  target: { lambda: name },
  payload: { id },
  timeoutSeconds: 600,
  ...more,
});
const record = (id: string) => jobRecord(stack, id);
const secret = () => process.env.CALLBACK_TOKEN_SECRET!;
const running = (id: string) =>
  waitFor(`${id} running`, async () => ((await record(id))?.state === 'running' ? record(id) : undefined), 20_000);
const sendReport = (body: string) =>
  testClients(stack).sqs.send(new SendMessageCommand({ QueueUrl: stack.callbackQueueUrl, MessageBody: body }));

test("a callback job runs end to end: started with its token, ended by the system's report event, its slot freed", async () => {
  const [id] = await enqueue(stack, [spec('cb-ok', 'ok-worker', { pool: 'cb1' })]);
  const done = await waitFor('the job succeeded', async () => ((await record(id!))?.state === 'succeeded' ? record(id!) : undefined));
  expect(done.executionId).toBe(tokenOf(secret(), id!));
  const run = stack.simulator.runs().find((r) => r.args.jobId === id)!;
  expect(run).toMatchObject({ executionId: done.executionId, name: 'ok-worker', args: { channel: 'lambda' } });
  expect(JSON.parse(run.args.payload!)).toEqual({ id });
  expect((await poolItem(stack, 'cb1'))!.inUse).toBe(0);
}, 30_000);

test('reports on the callback queue: a heartbeat is noted, `sluice complete --failed` ends the job with its reason', async () => {
  const [id] = await enqueue(stack, [spec('cb-queue', 'slow-worker', { heartbeatSeconds: 300 })]);
  const started = await running(id!);
  const token = started.executionId!;

  await sendReport(reportMessage({ type: 'heartbeat', token }));
  await waitFor('the heartbeat', async () => ((await record(id!)) as { heartbeatAt?: number } | undefined)?.heartbeatAt !== undefined);
  expect((await record(id!))!.state).toBe('running');

  const out: string[] = [];
  const io = {
    stdout: (t: string) => void out.push(t),
    stderr: (t: string) => void out.push(t),
    env: { ...process.env },
    readInput: () => Promise.reject(new Error('none')),
  };
  expect(await main(['complete', token, '--failed', 'the export file was empty', '--callback-queue-url', stack.callbackQueueUrl], io)).toBe(
    0,
  );
  const failed = await waitFor('the job failed', async () => ((await record(id!))?.state === 'failed' ? record(id!) : undefined));
  expect(failed.lastError).toBe('the export file was empty');
  await waitFor('the callback queue drained', async () => (await queueDepth(stack, stack.callbackQueueUrl)) === 0);
}, 30_000);

test('a forged token on the queue changes nothing and is not retried; a replayed report changes nothing either', async () => {
  const [id] = await enqueue(stack, [spec('cb-forged', 'slow-forged')]);
  const before = await running(id!);
  await sendReport(reportMessage({ type: 'completed', token: tokenOf('guessed secret', id!), outcome: 'succeeded' }));
  await waitFor('the forged report consumed', async () => (await queueDepth(stack, stack.callbackQueueUrl)) === 0);
  expect(await record(id!)).toEqual(before);

  await sendReport(reportMessage({ type: 'completed', token: before.executionId!, outcome: 'succeeded' }));
  const done = await waitFor('the job succeeded', async () => ((await record(id!))?.state === 'succeeded' ? record(id!) : undefined));
  await sendReport(reportMessage({ type: 'completed', token: before.executionId!, outcome: 'failed', reason: 'replayed' }));
  await waitFor('the replay consumed', async () => (await queueDepth(stack, stack.callbackQueueUrl)) === 0);
  expect(await record(id!)).toEqual(done);
}, 30_000);

test("the simulated system's heartbeats keep a run going past its heartbeat deadline", async () => {
  const [id] = await enqueue(stack, [spec('cb-beating', 'slow-beating', { heartbeatSeconds: 1 })]);
  const started = await running(id!);
  const beats = await waitFor('two heartbeats', async () => {
    const now = (await record(id!)) as { heartbeatAt?: number; startedAt?: number } | undefined;
    return now?.heartbeatAt !== undefined && now.heartbeatAt > (started as { startedAt?: number }).startedAt! + 1_000 ? now : undefined;
  });
  await stack.reconcileNow();
  expect((await record(id!))!.state).toBe('running');
  expect(beats.heartbeatAt! - beats.startedAt!).toBeGreaterThan(1_000);
}, 30_000);

test('a run whose heartbeats stop coming is ended as failed by the reconciler', async () => {
  // Every event on the bus is lost meanwhile: the system's heartbeats never reach Sluice.
  stack.bus.setFaults({ dropNext: 1_000_000 });
  try {
    const [id] = await enqueue(stack, [spec('cb-silent', 'slow-silent', { heartbeatSeconds: 1 })]);
    await running(id!);
    const failed = await waitFor('the reconciler ended it', async () => {
      await stack.reconcileNow();
      const now = await record(id!);
      return now?.state === 'failed' ? now : undefined;
    });
    expect(failed.lastError).toBe('timed out: no heartbeat for 1 s (none since its start)');
  } finally {
    stack.bus.setFaults({});
  }
}, 30_000);
