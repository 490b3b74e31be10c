import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { GetSecretValueCommand, PutSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { DeleteCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { reportMessage } from '../../shared/kinds/callback/reports';
import { forgetTokenKeys } from '../../shared/kinds/callback/secret';
import { makeToken } from '../../shared/kinds/callback/token';
import type { LocalStack } from '../../local/stack';
import { jobRecord } from '../support/invariants';
import { enqueue, poolItem, queueDepth, startTestStack, testClients } from '../support/testStack';
import { waitFor } from '../support/waitFor';

/**
 * Callback jobs through the whole local stack: the acquirer sends the start (an async invoke the simulator takes as
 * the user's system), the system reports through the real channels (a `sluice.callback` event on the bus, or a message
 * on the callback queue, as `sluice complete` sends it) to the callbacks function, and the reconciler ends a silent
 * run at its deadline. The token key is the stack's secret in Secrets Manager (the simulator's), rotated as on AWS.
 * Names starting `slow-` run for ten minutes (they end only by a report or a deadline).
 */

const ROOT = path.resolve(__dirname, '../..');
const exec = promisify(execFile);

let stack: LocalStack;
/** Everything the functions logged (DEBUG and up), as CloudWatch Logs would keep it. */
const logged: string[] = [];
const writes: jest.SpyInstance[] = [];

beforeAll(async () => {
  for (const stream of [process.stdout, process.stderr])
    writes.push(
      jest.spyOn(stream, 'write').mockImplementation((chunk: unknown) => {
        logged.push(String(chunk));
        return true;
      }),
    );
  stack = await startTestStack({
    env: { POOLS: JSON.stringify({ default: 8, cb1: 1 }), POWERTOOLS_LOG_LEVEL: 'DEBUG' },
    simulator: { durationMs: (_kind, name) => (name.startsWith('slow-') ? 600_000 : 100) },
    schedules: false,
  });
}, 60_000);
afterAll(async () => {
  await stack?.stop();
  for (const write of writes) write.mockRestore();
});

const spec = (id: string, name: string, more: Record<string, unknown> = {}) => ({
  kind: 'callback',
  id,
  target: { lambda: name },
  payload: { id },
  timeoutSeconds: 600,
  ...more,
});
const record = (id: string) => jobRecord(stack, id);
const inState = (id: string, state: string) =>
  waitFor(`${id} ${state}`, async () => ((await record(id))?.state === state ? record(id) : undefined), 20_000);
const running = (id: string) => inState(id, 'running');
const sendReport = (body: string) =>
  testClients(stack).sqs.send(new SendMessageCommand({ QueueUrl: stack.callbackQueueUrl, MessageBody: body }));
const callbackQueueDrained = () =>
  waitFor('the callback queue drained', async () => (await queueDepth(stack, stack.callbackQueueUrl)) === 0);
/** The token the user's system got in the start message of the job's latest run: nobody else gets it. */
const systemToken = (id: string) =>
  stack.simulator
    .runs()
    .filter((r) => r.args.jobId === id)
    .at(-1)!.args.token!;

/** `sluice ARGS` in a child process (bin/sluice.cjs), pointed at this stack. */
async function sluice(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const targets = ['--table', stack.tableName, '--queue-url', stack.queueUrl, '--dlq-url', stack.deadLetterUrl];
  const argv = [path.join(ROOT, 'bin/sluice.cjs'), ...args, ...targets, '--callback-queue-url', stack.callbackQueueUrl];
  const env = { ...process.env, SLUICE_LOCAL_ENV_FILE: '/nonexistent/sluice-local.env' };
  return exec(process.execPath, argv, { cwd: ROOT, env, timeout: 60_000 }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code?: number; stdout?: string; stderr?: string }) => ({
      code: error.code ?? -1,
      stdout: error.stdout ?? '',
      stderr: error.stderr ?? '',
    }),
  );
}

test("a callback job runs end to end: started with its token, ended by the system's report event, its slot freed", async () => {
  const [id] = await enqueue(stack, [spec('cb-ok', 'ok-worker', { pool: 'cb1' })]);
  const done = await inState(id!, 'succeeded');
  const run = stack.simulator.runs().find((r) => r.args.jobId === id)!;
  expect(run).toMatchObject({ executionId: done.executionId, name: 'ok-worker', args: { channel: 'lambda' } });
  expect(run.args.token).not.toBe(done.executionId);
  expect(JSON.parse(run.args.payload!)).toEqual({ id });
  expect((await poolItem(stack, 'cb1'))!.inUse).toBe(0);
}, 30_000);

test('reports on the callback queue: a heartbeat is noted, `sluice complete --failed` ends the job with its reason', async () => {
  const [id] = await enqueue(stack, [spec('cb-queue', 'slow-worker', { heartbeatSeconds: 300 })]);
  await running(id!);
  const token = systemToken(id!);

  await sendReport(reportMessage({ type: 'heartbeat', token }));
  await waitFor('the heartbeat', async () => ((await record(id!)) as { heartbeatAt?: number } | undefined)?.heartbeatAt !== undefined);
  expect((await record(id!))!.state).toBe('running');

  const sent = await sluice('complete', token, '--failed', 'the export file was empty');
  expect(sent).toMatchObject({ code: 0, stdout: expect.stringContaining(`failed of job ${id}`) });
  const failed = await inState(id!, 'failed');
  expect(failed.lastError).toBe('the export file was empty');
  await callbackQueueDrained();
}, 60_000);

test('what the table, `sluice jobs show`, `sluice top` and the logs show of a running job ends nothing: it is not its token', async () => {
  const [id] = await enqueue(stack, [spec('cb-shown', 'slow-shown')]);
  const started = await running(id!);

  // What anyone who can read the job's record, its listings or the logs learns: its run id.
  const shown = await sluice('jobs', 'show', id!, '--json');
  expect(shown.code).toBe(0);
  const runId = (JSON.parse(shown.stdout) as { executionId: string }).executionId;
  expect(runId).toBe(started.executionId);
  const top = await sluice('top', '--once');
  expect(top).toMatchObject({ code: 0, stdout: expect.stringContaining(runId) });
  const { Items } = await testClients(stack).doc.send(new ScanCommand({ TableName: stack.tableName, ConsistentRead: true }));
  const items = JSON.stringify(Items!.filter((item) => JSON.stringify(item).includes(id!) || JSON.stringify(item).includes(runId)));
  expect(items).toContain(runId);
  expect(logged.join('')).toContain(runId);

  // It cannot end the job: `sluice complete` refuses it, and a report carrying it (sent by hand) is dropped.
  const refused = await sluice('complete', runId, '--failed', 'ended by a reader');
  expect(refused).toMatchObject({ code: 2, stderr: expect.stringContaining('is a run id (as sluice jobs shows it), not a token') });
  await sendReport(reportMessage({ type: 'completed', token: runId, outcome: 'failed', reason: 'ended by a reader' }));
  await callbackQueueDrained();
  expect(await record(id!)).toEqual(started);

  // The token the system got is in none of them (nor its MAC), and it does end the job.
  const token = systemToken(id!);
  const mac = token.split('.')[1]!;
  for (const [where, text] of Object.entries({ items, show: shown.stdout, top: top.stdout, logs: logged.join('') })) {
    expect([where, text.includes(token) || text.includes(mac)]).toEqual([where, false]);
  }
  expect(await sluice('complete', token)).toMatchObject({ code: 0 });
  await inState(id!, 'succeeded');
  expect(logged.join('')).not.toContain(mac);
}, 90_000);

test('a token of run 1 cannot end run 2 of the same job id (the id sent again once its record expired)', async () => {
  const [id] = await enqueue(stack, [spec('cb-rerun', 'slow-rerun')]);
  await running(id!);
  const first = systemToken(id!);
  expect(await sluice('complete', first)).toMatchObject({ code: 0 });
  await inState(id!, 'succeeded');
  // The ledger's retention ended (DynamoDB's TTL deletes the record; its run reference may stay longer).
  await testClients(stack).doc.send(new DeleteCommand({ TableName: stack.tableName, Key: { pk: `JOB#${id}`, sk: 'JOB' } }));

  await enqueue(stack, [spec(id!, 'slow-rerun')]);
  const second = await running(id!);
  expect(systemToken(id!)).not.toBe(first);
  await sendReport(reportMessage({ type: 'completed', token: first, outcome: 'failed', reason: "run 1's token" }));
  await sendReport(reportMessage({ type: 'heartbeat', token: first }));
  await callbackQueueDrained();
  expect(await record(id!)).toEqual(second);

  expect(await sluice('complete', systemToken(id!))).toMatchObject({ code: 0 });
  await inState(id!, 'succeeded');
}, 90_000);

test('a forged token on the queue changes nothing and is not retried; a replayed report changes nothing either', async () => {
  const [id] = await enqueue(stack, [spec('cb-forged', 'slow-forged')]);
  const before = await running(id!);
  const forged = makeToken('guessed secret', { jobId: id!, run: before.firstStartAt!, expiresAt: Date.now() + 3600_000 });
  await sendReport(reportMessage({ type: 'completed', token: forged, outcome: 'succeeded' }));
  await callbackQueueDrained();
  expect(await record(id!)).toEqual(before);

  const token = systemToken(id!);
  await sendReport(reportMessage({ type: 'completed', token, outcome: 'succeeded' }));
  const done = await inState(id!, 'succeeded');
  await sendReport(reportMessage({ type: 'completed', token, outcome: 'failed', reason: 'replayed' }));
  await callbackQueueDrained();
  expect(await record(id!)).toEqual(done);
}, 30_000);

test('the token key rotated mid-run (a new value put in the secret): every running job still ends from its report', async () => {
  const [a, c, d] = await enqueue(stack, [spec('cb-rot-a', 'slow-rot-a'), spec('cb-rot-c', 'slow-rot-c'), spec('cb-rot-d', 'slow-rot-d')]);
  const [, runningC, runningD] = await Promise.all([running(a!), running(c!), running(d!)]);
  const tokenA = systemToken(a!);

  // The rotation, as an operator (or a rotation function) does it: PutSecretValue moves AWSCURRENT to the new value
  // and AWSPREVIOUS to the old one. Then every container starts anew: they read the secret as it is now.
  const secrets = new SecretsManagerClient({ endpoint: stack.simulator.endpoint });
  const SecretId = process.env.CALLBACK_TOKEN_SECRET_ARN!;
  const { SecretString: before } = await secrets.send(new GetSecretValueCommand({ SecretId }));
  const rotated = `rotated-${before}`;
  await secrets.send(new PutSecretValueCommand({ SecretId, SecretString: rotated }));
  secrets.destroy();
  forgetTokenKeys();

  // A token given out before the rotation (the previous version's key) ends its job.
  expect(await sluice('complete', tokenA)).toMatchObject({ code: 0 });
  await inState(a!, 'succeeded');
  // A token made with the new key (as containers that read the rotated secret make them) ends its job too.
  const expiresAt = Date.now() + 3600_000;
  const tokenC = makeToken(rotated, { jobId: c!, run: runningC.firstStartAt!, expiresAt });
  expect(await sluice('complete', tokenC)).toMatchObject({ code: 0 });
  await inState(c!, 'succeeded');
  // A forged one still does not.
  await sendReport(
    reportMessage({
      type: 'completed',
      token: makeToken('a guess', { jobId: d!, run: runningD.firstStartAt!, expiresAt }),
      outcome: 'succeeded',
    }),
  );
  await callbackQueueDrained();
  expect(await record(d!)).toEqual(runningD);
  // A job started after the rotation ends from its system's report, and so does the one running meanwhile.
  const [b] = await enqueue(stack, [spec('cb-rot-b', 'slow-rot-b')]);
  await running(b!);
  for (const id of [b!, d!]) expect(await sluice('complete', systemToken(id))).toMatchObject({ code: 0 });
  await Promise.all([inState(b!, 'succeeded'), inState(d!, 'succeeded')]);
}, 120_000);

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
