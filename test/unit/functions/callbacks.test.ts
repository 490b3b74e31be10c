import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { reportMessage } from '../../../shared/kinds/callback/reports';
import { makeToken, runIdOf } from '../../../shared/kinds/callback/token';
import { mockAwsClients, setLambdaEnv } from '../../support/lambdaEnv';

// Before the handler is required: it reads its configuration (and the token secret) on first use, as in Lambda.
const SECRET = 'handler-secret';
setLambdaEnv({ POWERTOOLS_LOG_LEVEL: 'SILENT', POWERTOOLS_METRICS_DISABLED: 'true', CALLBACK_TOKEN_SECRET: SECRET });
const { ddb } = mockAwsClients();

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { handler } = require('../../../functions/callbacks') as typeof import('../../../functions/callbacks');

/** A token of a run of `jobId` made with `key`, valid for an hour. */
const RUN = Date.now() - 60_000;
const tokenOf = (key: string, jobId: string) => makeToken(key, { jobId, run: RUN, expiresAt: Date.now() + 3600_000 });

const context = { functionName: 'callbacks', awsRequestId: 'req-1', getRemainingTimeInMillis: () => 30_000 } as unknown as Context;

const record = (messageId: string, body: string): SQSRecord => ({
  messageId,
  receiptHandle: `rh-${messageId}`,
  body,
  attributes: { ApproximateReceiveCount: '1', SentTimestamp: '0', SenderId: 'x', ApproximateFirstReceiveTimestamp: '0' },
  messageAttributes: {},
  md5OfBody: '',
  eventSource: 'aws:sqs',
  eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:sluice-test-callbacks',
  awsRegion: 'us-east-1',
});
const batch = (...records: SQSRecord[]): SQSEvent => ({ Records: records });

beforeEach(() => ddb.reset());

test('a batch of reports: a heartbeat is one conditional write; a forged token and a malformed message touch nothing and are not retried', async () => {
  ddb.on(UpdateCommand).resolves({});
  const token = tokenOf(SECRET, 'order-7');
  expect(token).not.toBe(runIdOf('order-7', RUN));
  const result = await handler(
    batch(
      record('m-1', reportMessage({ type: 'heartbeat', token })),
      record('m-2', reportMessage({ type: 'completed', token: tokenOf('guess', 'order-7'), outcome: 'succeeded' })),
      record('m-3', '{not json'),
    ),
    context,
  );
  expect(result).toEqual({ batchItemFailures: [] });
  const writes = ddb.commandCalls(UpdateCommand).map((c) => c.args[0].input);
  expect(writes).toHaveLength(1);
  expect(writes[0]).toMatchObject({
    Key: { pk: 'JOB#order-7', sk: 'JOB' },
    // The run id, not the token: the table never holds what ends a run.
    ExpressionAttributeValues: expect.objectContaining({ ':running': 'running', ':executionId': runIdOf('order-7', RUN) }),
  });
  expect(ddb.calls()).toHaveLength(1);
});

test('a report whose write fails is reported as a batch item failure, so SQS delivers it again', async () => {
  ddb.on(UpdateCommand).rejects(Object.assign(new Error('throttled'), { name: 'ProvisionedThroughputExceededException' }));
  const token = tokenOf(SECRET, 'order-8');
  const result = await handler(batch(record('m-9', reportMessage({ type: 'heartbeat', token }))), context);
  expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: 'm-9' }] });
});

test('a report event from the bus is read the same way (a forged one: no call at all)', async () => {
  const event = {
    version: '0',
    id: 'e-1',
    'detail-type': 'Sluice Callback Heartbeat',
    source: 'sluice.callback',
    account: '123456789012',
    time: '2026-11-22T09:06:22Z',
    region: 'us-east-1',
    resources: [],
    detail: { token: tokenOf('guess', 'order-9') },
  };
  await expect(handler(event, context)).resolves.toBeUndefined();
  expect(ddb.calls()).toHaveLength(0);
});
