import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetQueueUrlCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { parseArgs, UsageError } from '../../../shared/cli/args';
import { type CliIo, main } from '../../../shared/cli/main';
import { reportOfMessage } from '../../../shared/kinds/callback/reports';
import { makeToken, runIdOf } from '../../../shared/kinds/callback/token';

/** `sluice complete TOKEN [--failed REASON]` and `sluice heartbeat TOKEN`: a report message to the callback queue. */

const NO_LOCAL_STACK = { SLUICE_LOCAL_ENV_FILE: '/nonexistent/sluice-local.env' };
const NOW = 1_767_225_600_000;
const RUN = NOW - 60_000;
const TOKEN = makeToken('some secret', { jobId: 'order-7', run: RUN, expiresAt: NOW + 3600_000 });
/** What `sluice jobs show` shows of the run: its id, not its token. */
const RUN_ID = runIdOf('order-7', RUN);
const QUEUE = 'https://sqs.us-east-1.amazonaws.com/123456789012/sluice-prod-callbacks';

function run(argv: string[], env: NodeJS.ProcessEnv = { ...NO_LOCAL_STACK }) {
  const out: string[] = [];
  const err: string[] = [];
  const cli: CliIo = {
    stdout: (t) => void out.push(t),
    stderr: (t) => void err.push(t),
    env,
    readInput: () => Promise.reject(new Error('no file')),
    now: () => NOW,
  };
  const sqs = new SQSClient({ region: 'us-east-1' });
  const sqsMock = mockClient(sqs);
  sqsMock.on(SendMessageCommand).resolves({ MessageId: 'm-1' });
  sqsMock
    .on(GetQueueUrlCommand)
    .callsFake((input: { QueueName: string }) => ({ QueueUrl: `https://sqs.us-east-1.amazonaws.com/123456789012/${input.QueueName}` }));
  const doc = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1' }));
  const clients = () => ({ sqs, doc, close: () => undefined });
  return { done: main(argv, cli, clients), out, err, sqsMock };
}

const sent = (sqsMock: ReturnType<typeof run>['sqsMock']) =>
  sqsMock
    .commandCalls(SendMessageCommand)
    .map((call) => ({ queueUrl: call.args[0].input.QueueUrl, report: reportOfMessage(call.args[0].input.MessageBody!) }));

test('complete TOKEN sends a success report of that token to the callback queue', async () => {
  const { done, out, sqsMock } = run(['complete', TOKEN, '--callback-queue-url', QUEUE]);
  expect(await done).toBe(0);
  expect(sent(sqsMock)).toEqual([{ queueUrl: QUEUE, report: { type: 'completed', token: TOKEN, outcome: 'succeeded' } }]);
  expect(out.join('\n')).toContain('succeeded of job order-7');
});

test('complete TOKEN --failed REASON sends a failure with its reason; the stage names the queue', async () => {
  const { done, out, sqsMock } = run(['complete', TOKEN, '--failed', 'disk full', '--stage', 'prod', '--json']);
  expect(await done).toBe(0);
  expect(sqsMock.commandCalls(GetQueueUrlCommand).map((c) => c.args[0].input.QueueName)).toEqual(['sluice-prod-callbacks']);
  expect(sent(sqsMock)).toEqual([{ queueUrl: QUEUE, report: { type: 'completed', token: TOKEN, outcome: 'failed', reason: 'disk full' } }]);
  expect(JSON.parse(out.join(''))).toEqual({ jobId: 'order-7', report: 'failed', callbackQueueUrl: QUEUE, messageId: 'm-1' });
});

test('heartbeat TOKEN sends a heartbeat; the queue may come from SLUICE_CALLBACK_QUEUE_URL', async () => {
  const { done, sqsMock } = run(['heartbeat', TOKEN], { ...NO_LOCAL_STACK, SLUICE_CALLBACK_QUEUE_URL: QUEUE });
  expect(await done).toBe(0);
  expect(sent(sqsMock)).toEqual([{ queueUrl: QUEUE, report: { type: 'heartbeat', token: TOKEN } }]);
});

test.each([
  [['complete', 'not-a-token'], /not a callback token/],
  [['heartbeat', `${TOKEN}x/`], /not a callback token/],
  [['complete', TOKEN, '--failed', ' '], /--failed needs a reason/],
  [['complete'], /usage: sluice complete TOKEN/],
])('%j is a usage error, sent nowhere', async (argv, message) => {
  expect(() => parseArgs(argv)).toThrow(UsageError);
  expect(() => parseArgs(argv)).toThrow(message);
  const { done, sqsMock } = run([...argv, '--callback-queue-url', QUEUE]);
  expect(await done).toBe(2);
  expect(sqsMock.commandCalls(SendMessageCommand)).toEqual([]);
});

test('a run id (what sluice jobs shows) is refused as one, sent nowhere: it is not a token', async () => {
  for (const command of ['complete', 'heartbeat']) {
    const { done, err, sqsMock } = run([command, RUN_ID, '--callback-queue-url', QUEUE]);
    expect(await done).toBe(2);
    expect(err.join('\n')).toContain(`'${RUN_ID}' is a run id (as sluice jobs shows it), not a token`);
    expect(sqsMock.commandCalls(SendMessageCommand)).toEqual([]);
  }
});

test('an expired token is refused with when it expired, sent nowhere (Sluice would drop it)', async () => {
  const expired = makeToken('some secret', { jobId: 'order-7', run: RUN, expiresAt: NOW - 1_000 });
  const { done, err, sqsMock } = run(['complete', expired, '--callback-queue-url', QUEUE]);
  expect(await done).toBe(2);
  expect(err.join('\n')).toContain(`the token expired at ${new Date(NOW - 1_000).toISOString()}: Sluice refuses it`);
  expect(sqsMock.commandCalls(SendMessageCommand)).toEqual([]);
});

test('without a queue, stage or local stack, it says how to name the callback queue', async () => {
  const { done, err, sqsMock } = run(['complete', TOKEN]);
  expect(await done).toBe(2);
  expect(err.join('\n')).toContain('--callback-queue-url URL (or SLUICE_CALLBACK_QUEUE_URL)');
  expect(sqsMock.commandCalls(SendMessageCommand)).toEqual([]);
});

test('sluice jobs show: a callback job shows its target, payload, run id (not its token) and last heartbeat', async () => {
  const { formatJob } = await import('../../../shared/cli/formatInspect');
  const now = 1_767_225_600_000;
  const text = formatJob(
    {
      jobId: 'order-7',
      pool: 'default',
      kind: 'callback',
      state: 'running',
      spec: {
        id: 'order-7',
        pool: 'default',
        kind: 'callback',
        target: { lambda: 'sluice-worker' },
        payload: { day: 1 },
        timeoutSeconds: 60,
      },
      version: 4,
      attempts: 1,
      firstSeenAt: now - 60_000,
      updatedAt: now - 5_000,
      startedAt: now - 50_000,
      heartbeatAt: now - 5_000,
      executionId: RUN_ID,
    },
    now,
  );
  expect(text).toMatch(/kind\s+callback lambda:sluice-worker/);
  expect(text).toMatch(/payload\s+\{"day":1\}/);
  expect(text).toContain(`run id          ${RUN_ID}`);
  expect(text).not.toContain(TOKEN);
  expect(text).toMatch(/last heartbeat\s+\S/);
});
