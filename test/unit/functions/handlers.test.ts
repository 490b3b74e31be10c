import { UNLIMITED_COUNTER_LIMIT } from '../../../shared/domain/unlimited';
import { StartFlowCommand } from '@aws-sdk/client-appflow';
import { SAME_VERSION_HOLDING_COUNTED } from '../../../shared/adapters/dynamodb/conditions';
import { StartJobRunCommand } from '@aws-sdk/client-glue';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { GetCommand, PutCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Context, EventBridgeEvent, SQSEvent, SQSRecord } from 'aws-lambda';
import { ledgerItem, mockAwsClients, setLambdaEnv } from '../../support/lambdaEnv';

// Before the handlers are required: they read their configuration on first use, as in Lambda.
setLambdaEnv({ POWERTOOLS_LOG_LEVEL: 'SILENT', POWERTOOLS_METRICS_DISABLED: 'true' });
const { ddb, sqs, appflow, glue } = mockAwsClients();

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { handler: acquire } = require('../../../functions/acquirer') as typeof import('../../../functions/acquirer');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { handler: release } = require('../../../functions/releaser') as typeof import('../../../functions/releaser');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { container } = require('../../../shared/runtime/container') as typeof import('../../../shared/runtime/container');

const context = { functionName: 'acquirer', awsRequestId: 'req-1', getRemainingTimeInMillis: () => 30_000 } as unknown as Context;

function sqsRecord(messageId: string, body: string, attributes: SQSRecord['messageAttributes'] = {}): SQSRecord {
  return {
    messageId,
    receiptHandle: `rh-${messageId}`,
    body,
    attributes: { ApproximateReceiveCount: '1', SentTimestamp: '0', SenderId: 'x', ApproximateFirstReceiveTimestamp: '0' },
    messageAttributes: attributes,
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:sluice-test-jobs',
    awsRegion: 'us-east-1',
  };
}

/**
 * The table answers every write but the first of `jobId` (a first delivery's first write is the take that creates its
 * record), which fails as a DynamoDB server error. aws-sdk-client-mock: the general behaviour first, the specific after.
 */
function storeFailsFirstWriteOf(jobId: string): void {
  ddb.on(PutCommand).resolves({});
  ddb.on(UpdateCommand).resolves({});
  ddb.on(TransactWriteCommand).callsFake((input: { TransactItems: Array<{ Put?: { Item: { jobId?: string } } }> }) => {
    if (input.TransactItems.some((item) => item.Put?.Item.jobId === jobId))
      throw Object.assign(new Error('boom'), { name: 'InternalServerError' });
    return {};
  });
}

beforeEach(() => {
  ddb.reset();
  sqs.reset();
  appflow.reset();
  glue.reset();
});

describe('acquirer handler', () => {
  test('starts a valid job with a client token from its id, and dead-letters a malformed one with its reason', async () => {
    // Prepare: the ledger accepts the new job, the pool has a free slot.
    ddb.on(PutCommand).resolves({});
    ddb.on(UpdateCommand).resolves({});
    ddb.on(TransactWriteCommand).resolves({});
    appflow.on(StartFlowCommand).resolves({ executionId: 'exec-1' });
    sqs.on(SendMessageCommand).resolves({ MessageId: 'dlq-1' });
    const event: SQSEvent = {
      Records: [sqsRecord('m1', JSON.stringify({ kind: 'appflow', id: 'job-1', flowName: 'accounts' })), sqsRecord('m2', '{"kind":')],
    };

    // Act
    const response = await acquire(event, context);

    // Assess
    expect(response.batchItemFailures).toEqual([]);
    expect(appflow.commandCalls(StartFlowCommand)[0]!.args[0].input).toEqual({ flowName: 'accounts', clientToken: 'sluice-job-1' });
    // The slot: the pool's counter and the job's record in one transaction; a first delivery's record is created by it.
    const [take] = ddb.commandCalls(TransactWriteCommand).map((c) => c.args[0].input.TransactItems!);
    expect(ddb.commandCalls(PutCommand)).toEqual([]);
    expect(take).toEqual([
      {
        Update: expect.objectContaining({
          Key: { pk: 'POOL#default', sk: 'POOL' },
          // A pool the configuration gives a limit admits only onto a limited pool's counter, not adopting.
          ConditionExpression:
            'attribute_exists(pk) AND room >= :delta AND attribute_not_exists(unlimited) AND #limit < :unlimitedLimit AND attribute_not_exists(adopting) AND attribute_not_exists(intervalMs)',
          ExpressionAttributeNames: { '#limit': 'limit' },
          ExpressionAttributeValues: { ':delta': 1, ':minusDelta': -1, ':unlimitedLimit': UNLIMITED_COUNTER_LIMIT },
        }),
      },
      {
        Put: expect.objectContaining({
          ConditionExpression: 'attribute_not_exists(pk)',
          Item: expect.objectContaining({ pk: 'JOB#job-1', sk: 'JOB', state: 'starting', version: 2, holderPool: 'default' }),
        }),
      },
    ]);
    const dlq = sqs.commandCalls(SendMessageCommand).map((c) => c.args[0].input);
    expect(dlq).toHaveLength(1);
    expect(dlq[0]).toMatchObject({ QueueUrl: process.env.DLQ_URL, MessageBody: '{"kind":' });
    expect(dlq[0]!.MessageAttributes?.['sluice-reason']?.StringValue).toMatch(/not JSON/);
  });

  test('a store failure fails only its own record, so SQS delivers just that one again; the failure is logged by message id, never with the body', async () => {
    storeFailsFirstWriteOf('job-bad');
    glue.on(StartJobRunCommand).resolves({ JobRunId: 'jr_1' });
    const event: SQSEvent = {
      Records: [
        sqsRecord('ok', JSON.stringify({ kind: 'glue', id: 'job-ok', jobName: 'nightly' })),
        sqsRecord('bad', JSON.stringify({ kind: 'glue', id: 'job-bad', jobName: 'nightly' })),
      ],
    };

    const logged = jest.spyOn(container().logger, 'error').mockImplementation(() => undefined);
    const response = await acquire(event, context);
    const calls = [...logged.mock.calls];
    logged.mockRestore();

    expect(response.batchItemFailures).toEqual([{ itemIdentifier: 'bad' }]);
    expect(glue.commandCalls(StartJobRunCommand).map((c) => c.args[0].input.Arguments?.['--sluice-job-id'])).toEqual(['job-ok']);
    // The batch processor says nothing of a failed record: the handler does, or a message failing until it is
    // dead-lettered would leave no trace.
    expect(calls.map(([message, details]) => [message, (details as { messageId: string }).messageId])).toEqual([
      ['job message failed; SQS will deliver it again', 'bad'],
    ]);
    expect(JSON.stringify(calls)).not.toContain('nightly');
  });

  test('two invocations at once (the local stack runs them in one process): a record that failed in one is reported failed, not deleted', async () => {
    // Invocation A: one record fails at once, another is still being started; meanwhile invocation B runs a batch of
    // its own to the end. A processor shared between them had B clear A's failure, and A answered "all processed".
    storeFailsFirstWriteOf('job-a-bad');
    let letSlowStart!: () => void;
    const slowStart = new Promise<void>((resolve) => (letSlowStart = resolve));
    let slowStarted!: () => void;
    const slowStarting = new Promise<void>((resolve) => (slowStarted = resolve));
    glue.on(StartJobRunCommand).callsFake(async (input: { Arguments?: Record<string, string> }) => {
      if (input.Arguments?.['--sluice-job-id'] === 'job-a-slow') {
        slowStarted();
        await slowStart;
      }
      return { JobRunId: `jr_${input.Arguments?.['--sluice-job-id']}` };
    });
    const record = (id: string) => sqsRecord(id, JSON.stringify({ kind: 'glue', id: `job-${id}`, jobName: 'nightly' }));
    const silenced = jest.spyOn(container().logger, 'error').mockImplementation(() => undefined);
    try {
      const a = acquire({ Records: [record('a-bad'), record('a-slow')] }, context);
      await slowStarting; // A's bad record has failed by now; its slow one is starting
      expect((await acquire({ Records: [record('b-ok')] }, context)).batchItemFailures).toEqual([]);
      letSlowStart();
      expect((await a).batchItemFailures).toEqual([{ itemIdentifier: 'a-bad' }]);
    } finally {
      silenced.mockRestore();
    }
  });

  test('a reserved hint for a job that is not reserved starts nothing: the record, not the message, says who holds a slot', async () => {
    const spec = { kind: 'appflow', id: 'job-2', pool: 'default', flowName: 'accounts' };
    ddb.on(GetCommand, { Key: { pk: 'JOB#job-2', sk: 'JOB' } }).resolves({ Item: ledgerItem(spec, 'waiting') });

    const response = await acquire(
      {
        Records: [
          sqsRecord('m3', JSON.stringify(spec), {
            'sluice-reserved': { stringValue: 'true', dataType: 'String', stringListValues: [], binaryListValues: [] },
          }),
        ],
      },
      context,
    );

    expect(response.batchItemFailures).toEqual([]);
    expect(appflow.commandCalls(StartFlowCommand)).toHaveLength(0);
    expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(0);
    expect(ddb.commandCalls(UpdateCommand)).toHaveLength(0);
  });
});

describe('releaser handler', () => {
  const appflowEnd = (executionId: string): EventBridgeEvent<string, unknown> => ({
    version: '0',
    id: 'evt-1',
    'detail-type': 'AppFlow End Flow Run Report',
    source: 'aws.appflow',
    account: '123456789012',
    time: '2026-11-22T10:00:00Z',
    region: 'us-east-1',
    resources: ['0123456789abcdef0123456789abcdef'],
    detail: {
      'flow-name': 'accounts',
      'flow-arn': 'arn:aws:appflow:us-east-1:123456789012:flow/accounts',
      'execution-id': executionId,
      status: 'Execution Successful',
      'trigger-type': 'ONDEMAND',
    },
  });

  test('a completion frees the slot of the job that ran it', async () => {
    ddb
      .on(GetCommand, { Key: { pk: 'RUN#appflow#exec-1', sk: 'RUN' } })
      .resolves({ Item: { kind: 'appflow', executionId: 'exec-1', jobId: 'job-1', pool: 'default' } });
    const spec = { kind: 'appflow', id: 'job-1', pool: 'default', flowName: 'accounts' };
    ddb
      .on(GetCommand, { Key: { pk: 'JOB#job-1', sk: 'JOB' } })
      .resolves({ Item: ledgerItem(spec, 'running', { executionId: 'exec-1', version: 3, holderPool: 'default', leaseSince: 1 }) });
    ddb.on(GetCommand, { Key: { pk: 'POOL#default', sk: 'POOL' } }).resolves({ Item: { limit: 2, inUse: 0 } });
    ddb.on(TransactWriteCommand).resolves({});
    ddb.on(QueryCommand).resolves({ Items: [] });

    await release(appflowEnd('exec-1'), context);

    // The job's end and its slot's release: one transaction, fenced by the version read.
    const [free] = ddb.commandCalls(TransactWriteCommand).map((c) => c.args[0].input.TransactItems!);
    expect(free).toEqual([
      {
        Update: expect.objectContaining({
          Key: { pk: 'POOL#default', sk: 'POOL' },
          ExpressionAttributeValues: { ':delta': -1, ':minusDelta': 1 },
        }),
      },
      {
        Update: expect.objectContaining({
          Key: { pk: 'JOB#job-1', sk: 'JOB' },
          ConditionExpression: SAME_VERSION_HOLDING_COUNTED,
          ExpressionAttributeValues: expect.objectContaining({
            ':to': 'succeeded',
            ':executionId': 'exec-1',
            ':version': 3,
            ':pool': 'default',
          }),
        }),
      },
    ]);
  });

  test('a run Sluice did not start changes nothing', async () => {
    ddb.on(GetCommand).resolves({});

    await release(appflowEnd('someone-elses'), context);

    expect(ddb.commandCalls(UpdateCommand)).toHaveLength(0);
  });

  test('a malformed event is dropped without a retry and without touching the table', async () => {
    const broken = { ...appflowEnd('x'), detail: { status: 'Execution Successful' } };

    await expect(release(broken, context)).resolves.toBeUndefined();

    expect(ddb.calls()).toHaveLength(0);
  });
});
