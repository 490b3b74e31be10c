import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { mockClient } from 'aws-sdk-client-mock';
import { PermanentStartError, TransientStartError } from '../../../shared/errors';
import { callback } from '../../../shared/kinds/callback';
import { kindStarters } from '../../../shared/kinds/starters';
// The functions' entry points import it: it gives kindStarters each kind's SDK adapter.
import '../../../shared/kinds/starterLoaders';
import { createEventBusSender, EventBusSender } from '../../../shared/kinds/callback/send/eventBusSender';
import { createLambdaSender } from '../../../shared/kinds/callback/send/lambdaSender';
import type { TargetSender } from '../../../shared/kinds/callback/send/sender';
import { createSqsSender } from '../../../shared/kinds/callback/send/sqsSender';
import type { StartMessage, TargetMessage } from '../../../shared/kinds/callback/messages';
import { tokenKeyring } from '../../../shared/kinds/callback/secret';
import { CallbackStarter, createStarter } from '../../../shared/kinds/callback/starter';
import { checkToken, runIdOf } from '../../../shared/kinds/callback/token';
import { allowedTargetsFrom } from '../../../shared/kinds/callback/targets';
import { matchesNamePattern } from '../../../shared/domain/namePattern';
import { type JobApiSimulator, startJobApiSimulator } from '../../../local/simulators';
import { waitFor } from '../../support/waitFor';
import type { JobSpec } from '../../../shared/kinds/registry';

/**
 * What the callback kind adds to the conformance suite: every target channel through its real SDK client (the
 * simulator plays the user's system on each), the start message's content, the allowed-target check, the token.
 */

const SECRET = 'component-secret';
const ACCOUNT_QUEUE = 'https://sqs.us-east-1.amazonaws.com/123456789012';
let sim: JobApiSimulator;
let starter: CallbackStarter;
const env: NodeJS.ProcessEnv = {
  CALLBACK_TOKEN_SECRET: SECRET,
  CALLBACK_ALLOWED_QUEUES: 'work-*',
  CALLBACK_ALLOWED_BUSES: 'jobs-bus',
  CALLBACK_ALLOWED_FUNCTIONS: 'sluice-*',
  CALLBACK_QUEUE_URL: `${ACCOUNT_QUEUE}/sluice-dev-callbacks`,
};

beforeAll(async () => {
  sim = await startJobApiSimulator({ durationMs: (_kind, name) => (name.includes('slow') ? 60_000 : 30) });
  Object.assign(process.env, {
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'callback',
    AWS_SECRET_ACCESS_KEY: 'callback',
    // The simulator plays the user's queue, bus and function.
    AWS_ENDPOINT_URL_SQS: sim.endpoint,
    AWS_ENDPOINT_URL_EVENTBRIDGE: sim.endpoint,
    AWS_ENDPOINT_URL_LAMBDA: sim.endpoint,
  });
  // The kind's own starter (createStarter's configuration), its senders recording what they send.
  const recording = (make: () => TargetSender) => async (): Promise<TargetSender> => {
    const real = make();
    return { send: (address, message, options) => (messages.push(message), real.send(address, message, options)) };
  };
  starter = new CallbackStarter({
    senders: { sqs: recording(createSqsSender), eventBus: recording(createEventBusSender), lambda: recording(createLambdaSender) },
    signingKey: () => tokenKeyring(env).signingKey(),
    allowed: allowedTargetsFrom(env),
    callbackQueueUrl: env.CALLBACK_QUEUE_URL!,
  });
});
afterAll(() => sim?.close());

/** Every start and cancel message the starter sent, as it sent it. */
const messages: TargetMessage[] = [];
const sent = (): readonly TargetMessage[] => messages;
/** The start message of a run, as its system got it. */
const startOf = (runId: string): StartMessage => messages.find((m): m is StartMessage => m.type === 'start' && m.runId === runId)!;

const job = (id: string, target: unknown, more: Record<string, unknown> = {}): JobSpec =>
  callback.schema.parse({ kind: 'callback', id, target, payload: { order: id, lines: [1, 2] }, timeoutSeconds: 600, ...more }) as JobSpec;

describe('the token and the run id', () => {
  test('a start message carries the run id and a token of that run; only the run id is returned (and recorded)', async () => {
    const spec = job('org:acme.order-7', { lambda: 'sluice-slow-token' });
    const runSince = Date.now() - 5_000;
    const { executionId } = await starter.start(spec, { runSince });
    expect(executionId).toBe(runIdOf('org:acme.order-7', runSince));
    const { token } = startOf(executionId);
    expect(token).toMatch(/^cb2\.[A-Za-z0-9_-]{43}\.\d+\.\d+\.org:acme\.order-7$/);
    expect(checkToken([SECRET], token, Date.now())).toMatchObject({ verdict: 'valid', runId: executionId, claims: { run: runSince } });
    expect(token).not.toContain(executionId);
    expect(checkToken([SECRET], executionId, Date.now()).verdict).toBe('forged');
    await starter.stop(spec, executionId);
  });

  test('another run of the same job id (another slot) is another run id, its token checks only as that run', async () => {
    const spec = job('c-two-runs', { lambda: 'sluice-slow-runs' });
    const first = await starter.start(spec, { runSince: 1_000 });
    const second = await starter.start(spec, { runSince: 2_000 });
    expect(second.executionId).not.toBe(first.executionId);
    expect(checkToken([SECRET], startOf(first.executionId).token, Date.now())).toMatchObject({ runId: first.executionId });
    expect(checkToken([SECRET], startOf(second.executionId).token, Date.now())).toMatchObject({ runId: second.executionId });
    await starter.stop(spec, first.executionId);
    await starter.stop(spec, second.executionId);
  });
});

test("the functions' starter (each kind's, loaded on first use) knows a callback run's id before its start", async () => {
  // A job given up after a start of unknown outcome has that run recorded, so its report gives the slot back.
  Object.assign(process.env, { CALLBACK_TOKEN_SECRET: SECRET });
  const starters = kindStarters({ warn: () => undefined });
  const spec = job('c-known', { lambda: 'sluice-worker' });
  expect(await starters.callback.runIdOf!(spec, { runSince: 1_000 })).toBe(runIdOf('c-known', 1_000));
  // Kinds whose API names a run only when it starts it answer none.
  const glue = { kind: 'glue', id: 'g-1', pool: 'default', jobName: 'sluice-g' } as unknown as JobSpec;
  expect(await starters.glue.runIdOf!(glue)).toBeUndefined();
});

describe('starts on every channel, through the real SDK clients', () => {
  test.each([
    ['a Lambda function (async invoke)', { lambda: 'sluice-worker' }, 'sluice-worker', 'lambda'],
    ['a Lambda function by ARN', { lambda: 'arn:aws:lambda:us-east-1:123456789012:function:sluice-arn:live' }, 'sluice-arn', 'lambda'],
    ['an SQS queue', { sqs: `${ACCOUNT_QUEUE}/work-orders` }, 'work-orders', 'sqs'],
    ['an EventBridge bus', { eventBus: 'jobs-bus', detailType: 'Order Export' }, 'jobs-bus', 'eventBus'],
  ])('%s gets the job id, its payload, the run id and its token', async (_what, target, name, channel) => {
    const spec = job(`c-${channel}-${name}`, target);
    const runSince = Date.now();
    const { executionId } = await starter.start(spec, { runSince });
    expect(executionId).toBe(runIdOf(spec.id, runSince));
    const run = sim.runs().find((r) => r.executionId === executionId)!;
    expect(run).toMatchObject({ kind: 'callback', name, args: { jobId: spec.id, channel, timeoutSeconds: '600' } });
    expect(JSON.parse(run.args.payload!)).toEqual({ order: spec.id, lines: [1, 2] });
    // The system reports the end with the token, on the report channel; its run id is the token's.
    const { event } = await waitFor('the report', () => sim.emitted().find((e) => e.executionId === executionId), 5_000, 5);
    expect(event).toMatchObject({
      source: 'sluice.callback',
      'detail-type': 'Sluice Callback Completed',
      detail: { token: run.args.token, outcome: 'succeeded' },
    });
    expect(checkToken([SECRET], run.args.token, Date.now())).toMatchObject({ verdict: 'valid', runId: executionId });
    expect(callback.events.parse(event)).toMatchObject({ executionId, outcome: 'succeeded' });
  });

  test('a start sent again (at least once) names the same run: the system dedupes by run id, one run', async () => {
    const spec = job('c-again', { lambda: 'sluice-slow-worker' });
    const runSince = Date.now();
    const first = await starter.start(spec, { runSince });
    const again = await starter.start(spec, { mayHaveStarted: true, runSince });
    expect(again.executionId).toBe(first.executionId);
    // Known before the start (JobStarter.runIdOf): a start given up with its outcome unknown records it.
    expect(await starter.runIdOf(spec, { runSince })).toBe(first.executionId);
    expect(sim.startCalls().filter((c) => c.clientToken === first.executionId)).toHaveLength(2);
    expect(sim.runs().filter((r) => r.args.jobId === 'c-again')).toHaveLength(1);
    await starter.stop(spec, first.executionId);
  });

  test('stop sends a cancel naming the run (no token) to the same target; the system ends the run and reports it failed', async () => {
    const slow = job('c-cancel-slow', { sqs: `${ACCOUNT_QUEUE}/work-slow` });
    const run = await starter.start(slow);
    const { token } = startOf(run.executionId);
    expect(sim.runs().find((r) => r.executionId === run.executionId)!.endedAt).toBeUndefined();
    await starter.stop(slow, run.executionId);
    const { event } = await waitFor('the cancelled report', () => sim.emitted().find((e) => e.executionId === run.executionId), 5_000, 5);
    expect(event.detail).toEqual({ token, outcome: 'failed', reason: 'cancelled' });
    const cancel = sent().find((m) => m.type === 'cancel' && m.runId === run.executionId);
    expect(cancel).toEqual({
      type: 'cancel',
      jobId: 'c-cancel-slow',
      runId: run.executionId,
      reason: 'stopped by Sluice: past its deadline',
    });
  });

  test('the status of a run is in progress whatever happened: there is no API to ask, the report or the deadline ends it', async () => {
    const spec = job('c-status', { lambda: 'sluice-worker' });
    const { executionId } = await starter.start(spec);
    await waitFor('the report', () => sim.emitted().find((e) => e.executionId === executionId), 5_000, 5);
    expect(await starter.status(spec, executionId)).toBe('in-progress');
  });
});

describe('refused starts', () => {
  test.each([
    ['a queue', { sqs: `${ACCOUNT_QUEUE}/payroll` }, "sqs target 'payroll' is not allowed: names must match 'work-*'"],
    ['a bus', { eventBus: 'default' }, "eventBus target 'default' is not allowed"],
    ['a function', { lambda: 'arn:aws:lambda:us-east-1:123456789012:function:admin-tool' }, "lambda target 'admin-tool' is not allowed"],
  ])('%s not allowed by configuration: a permanent error saying why, nothing sent', async (_what, target, reason) => {
    const spec = job(`c-refused-${_what.replace(' ', '-')}`, target);
    const error = await starter.start(spec).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PermanentStartError);
    expect(error).toMatchObject({ code: 'TargetNotAllowed', message: expect.stringContaining(reason) });
    expect(sim.startCalls().filter((c) => c.kind === 'callback' && c.name === targetName(target))).toEqual([]);
  });

  test('a target type with no pattern configured is allowed nowhere', async () => {
    const bare = createStarter({ CALLBACK_TOKEN_SECRET: SECRET });
    await expect(bare.start(job('c-bare', { lambda: 'sluice-worker' }))).rejects.toMatchObject({
      code: 'TargetNotAllowed',
      message: expect.stringContaining('CALLBACK_ALLOWED_FUNCTIONS is not set'),
    });
  });

  test('a function that does not exist: the API says so, a permanent error', async () => {
    sim.deleteName('callback', 'sluice-gone');
    const error = await starter.start(job('c-gone', { lambda: 'sluice-gone' })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PermanentStartError);
    expect((error as PermanentStartError).code).toBe('ResourceNotFoundException');
  });

  test('no secret to make the token with: a refusal (retried later), nothing sent', async () => {
    const noSecret = createStarter({ CALLBACK_ALLOWED_FUNCTIONS: '*' });
    const calls = sim.startCalls().length;
    const error = await noSecret.start(job('c-nosecret', { lambda: 'sluice-worker' })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransientStartError);
    expect(error).toMatchObject({ code: 'TokenSecretUnavailable', definite: true });
    expect(sim.startCalls()).toHaveLength(calls);
  });

  test("a PutEvents entry that failed (the call answered 200) is classified by the entry's ErrorCode", async () => {
    const events = new EventBridgeClient({ region: 'us-east-1' });
    const mock = mockClient(events);
    const withBus = new CallbackStarter({
      senders: {
        sqs: () => Promise.reject(new Error('unused')),
        lambda: () => Promise.reject(new Error('unused')),
        eventBus: async () => new EventBusSender(events),
      },
      signingKey: async () => SECRET,
      allowed: { sqs: undefined, lambda: undefined, eventBus: '*' },
    });
    const failing = (ErrorCode: string) =>
      mock.on(PutEventsCommand).resolves({ FailedEntryCount: 1, Entries: [{ ErrorCode, ErrorMessage: `simulated ${ErrorCode}` }] });
    failing('ThrottlingException');
    await expect(withBus.start(job('c-entry-1', { eventBus: 'jobs-bus' }))).rejects.toMatchObject({
      code: 'ThrottlingException',
      definite: true,
    });
    failing('InternalFailure');
    await expect(withBus.start(job('c-entry-2', { eventBus: 'jobs-bus' }))).rejects.toMatchObject({
      code: 'InternalFailure',
      definite: false,
    });
    failing('NotAuthorizedForSourceException');
    const permanent = await withBus.start(job('c-entry-3', { eventBus: 'jobs-bus' })).catch((e: unknown) => e);
    expect(permanent).toBeInstanceOf(PermanentStartError);
    const sent = mock.commandCalls(PutEventsCommand)[0]!.args[0].input.Entries![0]!;
    expect(sent).toMatchObject({ EventBusName: 'jobs-bus', Source: 'sluice', DetailType: 'Sluice Callback Start' });
    const detail = JSON.parse(sent.Detail!) as { token: string; runId: string };
    expect(detail).toMatchObject({ type: 'start', jobId: 'c-entry-1' });
    expect(checkToken([SECRET], detail.token, Date.now())).toMatchObject({ verdict: 'valid', runId: detail.runId });
  });
});

describe('the spec', () => {
  const parse = (more: Record<string, unknown>) =>
    callback.schema.safeParse({ kind: 'callback', id: 'j', target: { lambda: 'sluice-w' }, timeoutSeconds: 60, ...more });

  test('needs one target of one type, a whole timeout, a heartbeat no longer than the timeout, a bounded payload', () => {
    expect(parse({}).success).toBe(true);
    expect(parse({ target: { lambda: 'sluice-w', sqs: `${ACCOUNT_QUEUE}/q` } }).success).toBe(false);
    expect(parse({ target: { sqs: 'not a url' } }).success).toBe(false);
    expect(parse({ timeoutSeconds: undefined }).success).toBe(false);
    expect(parse({ timeoutSeconds: 1.5 }).success).toBe(false);
    expect(parse({ timeoutSeconds: 8 * 24 * 3600 }).success).toBe(false);
    expect(parse({ heartbeatSeconds: 61 }).success).toBe(false);
    expect(parse({ heartbeatSeconds: 60 }).success).toBe(true);
    expect(parse({ payload: { blob: 'x'.repeat(40_000) } }).success).toBe(false);
    expect(parse({ payload: [1, 'two', { three: null }] }).success).toBe(true);
  });

  test('name patterns match as IAM wildcards do, the whole name', () => {
    expect(matchesNamePattern('sluice-*', 'sluice-a.b')).toBe(true);
    expect(matchesNamePattern('sluice-*', 'xsluice-a')).toBe(false);
    expect(matchesNamePattern('job?', 'job1')).toBe(true);
    expect(matchesNamePattern('job?', 'job12')).toBe(false);
    expect(matchesNamePattern('a.b', 'axb')).toBe(false);
  });
});

function targetName(target: Record<string, string>): string {
  return (target.sqs ?? target.eventBus ?? target.lambda ?? '').split(/[/:]/).pop()!;
}
