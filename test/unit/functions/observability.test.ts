import { StartFlowCommand } from '@aws-sdk/client-appflow';
import { GetCommand, PutCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Context, EventBridgeEvent, SQSRecord } from 'aws-lambda';
import { ledgerItem, mockAwsClients, setLambdaEnv } from '../../support/lambdaEnv';
import { waitKey } from '../../../shared/domain/waiting';

/**
 * What the handlers print for CloudWatch, read from stdout and stderr as Lambda would: the reconciler's pool gauges, the
 * acquirer's hand-off latency, the releaser's per-invocation log keys, all under the stage's service name. (The
 * handlers' AWS calls are mocked; handlers.test.ts checks the calls themselves.)
 */

// The handlers read their configuration on first use, as in Lambda. Metrics on and logs at INFO: this file reads them.
const SERVICE = 'sluice-test';
setLambdaEnv({
  POWERTOOLS_SERVICE_NAME: SERVICE,
  POWERTOOLS_METRICS_NAMESPACE: 'Sluice',
  POWERTOOLS_LOG_LEVEL: 'INFO',
  POWERTOOLS_METRICS_DISABLED: 'false',
});
// Dev mode would print through Jest's console instead of stdout.
delete process.env.POWERTOOLS_DEV;

const { ddb, sqs, appflow, glue } = mockAwsClients();

/* eslint-disable @typescript-eslint/no-require-imports */
const { handler: acquire } = require('../../../functions/acquirer') as typeof import('../../../functions/acquirer');
const { handler: release } = require('../../../functions/releaser') as typeof import('../../../functions/releaser');
const { handler: reconcile } = require('../../../functions/reconciler') as typeof import('../../../functions/reconciler');
/* eslint-enable @typescript-eslint/no-require-imports */

const contextOf = (functionName: string, awsRequestId: string) =>
  ({
    functionName,
    functionVersion: '$LATEST',
    memoryLimitInMB: '256',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:123456789012:function:${functionName}`,
    awsRequestId,
    getRemainingTimeInMillis: () => 30_000,
  }) as unknown as Context;

interface EmfLine {
  _aws: { CloudWatchMetrics: Array<{ Namespace: string; Dimensions: string[][]; Metrics: Array<{ Name: string; Unit: string }> }> };
  [key: string]: unknown;
}
type JsonLine = Record<string, unknown>;

/** Every JSON line printed to stdout or stderr while `act` runs, and what `act` resolved or rejected with. */
async function capture<T>(act: () => Promise<T>): Promise<{ lines: JsonLine[]; result: PromiseSettledResult<T> }> {
  const chunks: string[] = [];
  const record = (chunk: string | Uint8Array) => {
    chunks.push(String(chunk));
    return true;
  };
  const out = jest.spyOn(process.stdout, 'write').mockImplementation(record);
  const err = jest.spyOn(process.stderr, 'write').mockImplementation(record);
  let result: PromiseSettledResult<T>;
  try {
    result = await act().then(
      (value) => ({ status: 'fulfilled', value }) as const,
      (reason: unknown) => ({ status: 'rejected', reason }) as const,
    );
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
  const lines = chunks
    .join('')
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as JsonLine);
  return { lines, result };
}

const emfLines = (lines: JsonLine[]) => lines.filter((l): l is EmfLine => '_aws' in l);
const metricNames = (line: EmfLine) => line._aws.CloudWatchMetrics[0]!.Metrics.map((m) => m.Name);
const logLines = (lines: JsonLine[]) => lines.filter((l) => !('_aws' in l));
const gaugeLines = (lines: JsonLine[]) => emfLines(lines).filter((l) => metricNames(l).includes('OverdueLeases'));

const failure = (name: string) => Object.assign(new Error(`${name} (injected)`), { name });

beforeEach(() => {
  ddb.reset();
  sqs.reset();
  appflow.reset();
  glue.reset();
});

describe('reconciler: pool gauges every run', () => {
  const HOUR = 3_600_000;

  /** Pools default (2 free slots, nobody waits) and etl (full: one fresh slot, one held for 55 hours, past Glue's 48 + the 6-hour retry budget; 4 waiting). */
  function twoPools() {
    const now = Date.now();
    ddb.on(QueryCommand, { ExpressionAttributeValues: { ':pk': 'POOLS' } }).resolves({
      Items: [
        { pk: 'POOLS', sk: 'default' },
        { pk: 'POOLS', sk: 'etl' },
      ],
    });
    // No pool has ever been unlimited (no uncounted slots to visit).
    ddb.on(QueryCommand, { ExpressionAttributeValues: { ':pk': 'UNCOUNTED' } }).resolves({ Items: [] });
    ddb.on(GetCommand, { Key: { pk: 'POOL#default', sk: 'POOL' } }).resolves({ Item: { limit: 2, inUse: 0 } });
    ddb.on(GetCommand, { Key: { pk: 'POOL#etl', sk: 'POOL' } }).resolves({ Item: { limit: 2, inUse: 2 } });
    // The holders index: nobody in default; in etl a slot held for 49 hours and a fresh one.
    ddb.on(QueryCommand, { IndexName: 'holders', ExpressionAttributeValues: { ':pool': 'default' } }).resolves({ Items: [] });
    ddb.on(QueryCommand, { IndexName: 'holders', ExpressionAttributeValues: { ':pool': 'etl' } }).resolves({
      Items: [
        { pk: 'JOB#fresh', sk: 'JOB', holderPool: 'etl', kind: 'appflow', leaseSince: now },
        { pk: 'JOB#stuck', sk: 'JOB', holderPool: 'etl', kind: 'glue', leaseSince: now - 55 * HOUR },
      ],
    });
    // The stuck slot's job cannot be read: the reconciler logs it and leaves the slot (the case the alarm is for).
    ddb.on(GetCommand, { Key: { pk: 'JOB#stuck', sk: 'JOB' } }).rejects(failure('InternalServerError'));
    ddb.on(GetCommand, { Key: { pk: 'JOB#fresh', sk: 'JOB' } }).resolves({});
    // Waiters: none to let in (fill), and the counts the gauges read.
    ddb.on(QueryCommand, { ExpressionAttributeValues: { ':pk': 'POOL#default' } }).resolves({ Items: [], Count: 0 });
    // The first in line (the pool-stuck gauge reads it): waiting for an hour.
    ddb.on(QueryCommand, { ExpressionAttributeValues: { ':pk': 'POOL#etl' } }).resolves({
      Items: [{ pk: 'POOL#etl', sk: `WAIT#${waitKey(now - HOUR, 'w1')}`, jobId: 'w1', kind: 'glue', body: '{}', since: now - HOUR }],
      Count: 1,
    });
    ddb.on(QueryCommand, { ExpressionAttributeValues: { ':pk': 'POOL#etl' }, Select: 'COUNT' }).resolves({ Count: 4 });
  }

  test('after reconciling, one EMF line per pool and one for the service, in the namespace and service the alarm reads', async () => {
    twoPools();

    const { lines, result } = await capture(() => reconcile({}, contextOf('sluice-test-reconciler', 'r-1')));

    expect(result).toEqual({ status: 'fulfilled', value: { pools: 2, holdersChecked: 2, unfinished: 0, drift: {} } });
    const gauges = gaugeLines(lines);
    expect(gauges.map((l) => [l._aws.CloudWatchMetrics[0]!.Namespace, l.service, l.pool])).toEqual([
      ['Sluice', SERVICE, 'default'],
      ['Sluice', SERVICE, 'etl'],
      ['Sluice', SERVICE, undefined],
    ]);
    expect(gauges.map((l) => l._aws.CloudWatchMetrics[0]!.Dimensions)).toEqual([
      [['service', 'pool']],
      [['service', 'pool']],
      [['service']],
    ]);
    expect(gauges[0]).toMatchObject({ SlotsInUse: 0, SlotLimit: 2, Waiting: 0, OverdueLeases: 0 });
    expect(gauges[1]).toMatchObject({ SlotsInUse: 2, SlotLimit: 2, Waiting: 4, OverdueLeases: 1 });
    expect(gauges[2]).toMatchObject({ SlotsInUse: 2, SlotLimit: 4, Waiting: 4, OverdueLeases: 1 });
    for (const line of gauges)
      expect(metricNames(line).sort()).toEqual(['OldestWaitSeconds', 'OverdueLeases', 'PausedPools', 'SlotLimit', 'SlotsInUse', 'Waiting']);
    // etl's first in line has waited an hour (its wait key's time), which the service's line reports as its longest.
    expect(gauges.map((l) => [l.pool, Math.round(Number(l.OldestWaitSeconds) / 60), l.PausedPools])).toEqual([
      ['default', 0, 0],
      ['etl', 60, 0],
      [undefined, 60, 0],
    ]);
    // Published after the run: its report line comes first.
    const reported = lines.findIndex((l) => l.message === 'reconciled');
    expect(reported).toBeGreaterThanOrEqual(0);
    expect(reported).toBeLessThan(lines.indexOf(gauges[0]!));
  });

  test('a gauge failure is logged and the reconcile run still succeeds', async () => {
    twoPools();
    // The pool list answers the reconciler, then fails for the gauges.
    ddb
      .on(QueryCommand, { ExpressionAttributeValues: { ':pk': 'POOLS' } })
      .resolvesOnce({ Items: [{ pk: 'POOLS', sk: 'default' }] })
      .rejects(failure('ProvisionedThroughputExceededException'));

    const { lines, result } = await capture(() => reconcile({}, contextOf('sluice-test-reconciler', 'r-2')));

    expect(result).toEqual({ status: 'fulfilled', value: { pools: 1, holdersChecked: 0, unfinished: 0, drift: {} } });
    expect(gaugeLines(lines)).toEqual([]);
    expect(logLines(lines).find((l) => l.message === 'pool gauges not published')).toMatchObject({
      level: 'ERROR',
      service: SERVICE,
      error: expect.stringContaining('ProvisionedThroughputExceededException'),
    });
  });

  test('a failed reconcile still publishes the gauges, then fails the invocation (the reconciler-errors alarm)', async () => {
    twoPools();
    ddb
      .on(QueryCommand, { ExpressionAttributeValues: { ':pk': 'POOLS' } })
      .rejectsOnce(failure('InternalServerError'))
      .resolves({ Items: [{ pk: 'POOLS', sk: 'etl' }] });

    const { lines, result } = await capture(() => reconcile({}, contextOf('sluice-test-reconciler', 'r-3')));

    expect(result.status).toBe('rejected');
    expect(gaugeLines(lines).map((l) => [l.pool, l.OverdueLeases])).toEqual([
      ['etl', 1],
      [undefined, 1],
    ]);
  });
});

describe('acquirer: HandOffLatency', () => {
  const spec = { kind: 'appflow', id: 'job-h', pool: 'default', flowName: 'accounts' };
  const reserved = { 'sluice-reserved': { stringValue: 'true', dataType: 'String', stringListValues: [], binaryListValues: [] } };

  function record(messageId: string, sentTimestamp: string, attributes: SQSRecord['messageAttributes']): SQSRecord {
    return {
      messageId,
      receiptHandle: `rh-${messageId}`,
      body: JSON.stringify(spec),
      attributes: {
        ApproximateReceiveCount: '1',
        SentTimestamp: sentTimestamp,
        SenderId: 'x',
        ApproximateFirstReceiveTimestamp: sentTimestamp,
      },
      messageAttributes: attributes,
      md5OfBody: '',
      eventSource: 'aws:sqs',
      eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:sluice-test-jobs',
      awsRegion: 'us-east-1',
    };
  }

  /** job-h waits in the ledger and holds the slot a release reserved for it. */
  function handedOff() {
    ddb.on(GetCommand, { Key: { pk: 'JOB#job-h', sk: 'JOB' } }).resolves({
      Item: ledgerItem(spec, 'reserved', { holderPool: 'default', leaseSince: 1 }),
    });
    ddb.on(TransactWriteCommand).resolves({});
    ddb.on(UpdateCommand).resolves({});
    appflow.on(StartFlowCommand).resolves({ executionId: 'exec-h' });
  }

  test('a reserved job started from its wake-up reports the time since SQS received that message, per pool and for the service', async () => {
    handedOff();
    const sentAt = Date.now() - 250;

    const before = Date.now();
    const { lines, result } = await capture(() =>
      acquire({ Records: [record('w1', String(sentAt), reserved)] }, contextOf('sluice-test-acquirer', 'a-1')),
    );
    const after = Date.now();

    expect(result).toEqual({ status: 'fulfilled', value: { batchItemFailures: [] } });
    expect(appflow.commandCalls(StartFlowCommand)).toHaveLength(1);
    const latency = emfLines(lines).filter((l) => metricNames(l).includes('HandOffLatency'));
    expect(latency).toHaveLength(1);
    expect(latency[0]!._aws.CloudWatchMetrics[0]).toEqual({
      Namespace: 'Sluice',
      Dimensions: [['service', 'pool'], ['service']],
      Metrics: [{ Name: 'HandOffLatency', Unit: 'Milliseconds' }],
    });
    expect(latency[0]).toMatchObject({ service: SERVICE, pool: 'default' });
    expect(latency[0]!.HandOffLatency).toBeGreaterThanOrEqual(before - sentAt);
    expect(latency[0]!.HandOffLatency).toBeLessThanOrEqual(after - sentAt);
  });

  test('no HandOffLatency for a job started from its own message (no reserved attribute)', async () => {
    ddb.on(PutCommand).resolves({});
    ddb.on(UpdateCommand).resolves({});
    ddb.on(TransactWriteCommand).resolves({});
    appflow.on(StartFlowCommand).resolves({ executionId: 'exec-h' });

    const { lines, result } = await capture(() =>
      acquire({ Records: [record('p1', String(Date.now() - 250), {})] }, contextOf('sluice-test-acquirer', 'a-2')),
    );

    expect(result).toEqual({ status: 'fulfilled', value: { batchItemFailures: [] } });
    expect(emfLines(lines).filter((l) => metricNames(l).includes('Starts'))).toHaveLength(1);
    expect(emfLines(lines).filter((l) => metricNames(l).includes('HandOffLatency'))).toEqual([]);
  });

  test('no HandOffLatency for a reserved message without a SentTimestamp', async () => {
    handedOff();

    const { lines, result } = await capture(() =>
      acquire({ Records: [record('p2', '', reserved)] }, contextOf('sluice-test-acquirer', 'a-3')),
    );

    expect(result).toEqual({ status: 'fulfilled', value: { batchItemFailures: [] } });
    expect(emfLines(lines).filter((l) => metricNames(l).includes('Starts'))).toHaveLength(1);
    expect(emfLines(lines).filter((l) => metricNames(l).includes('HandOffLatency'))).toEqual([]);
  });
});

describe('releaser: kind and executionId on every line of the invocation, and only of it', () => {
  const appflowEnd = (executionId: string): EventBridgeEvent<string, unknown> => ({
    version: '0',
    id: `evt-${executionId}`,
    'detail-type': 'AppFlow End Flow Run Report',
    source: 'aws.appflow',
    account: '123456789012',
    time: '2026-11-22T10:00:00Z',
    region: 'us-east-1',
    resources: [],
    detail: { 'flow-name': 'accounts', 'execution-id': executionId, status: 'Execution Successful' },
  });
  const malformed = { ...appflowEnd('x'), id: 'evt-malformed', detail: { status: 'Execution Successful' } };

  test('a line the services write without them carries them; the next invocations do not, even after a failure', async () => {
    // exec-1 leads to job-1, which the ledger has in another run: the releaser warns without naming the kind itself.
    ddb
      .on(GetCommand, { Key: { pk: 'RUN#appflow#exec-1', sk: 'RUN' } })
      .resolves({ Item: { kind: 'appflow', executionId: 'exec-1', jobId: 'job-1', pool: 'default' } });
    ddb.on(GetCommand, { Key: { pk: 'JOB#job-1', sk: 'JOB' } }).resolves({
      Item: {
        jobId: 'job-1',
        pool: 'default',
        kind: 'appflow',
        state: 'running',
        executionId: 'exec-0',
        spec: '{}',
        attempts: 1,
        firstSeenAt: 1,
        updatedAt: 1,
      },
    });
    ddb.on(QueryCommand).resolves({ Items: [] });
    ddb.on(UpdateCommand).rejects(failure('ConditionalCheckFailedException'));
    // exec-2: the table fails, the invocation throws (EventBridge retries it).
    ddb.on(GetCommand, { Key: { pk: 'RUN#appflow#exec-2', sk: 'RUN' } }).rejects(failure('InternalServerError'));

    const first = await capture(() => release(appflowEnd('exec-1'), contextOf('sluice-test-releaser', 'rel-1')));
    const second = await capture(() => release(malformed, contextOf('sluice-test-releaser', 'rel-2')));
    const failed = await capture(() => release(appflowEnd('exec-2'), contextOf('sluice-test-releaser', 'rel-3')));
    const fourth = await capture(() => release(malformed, contextOf('sluice-test-releaser', 'rel-4')));

    expect(first.result.status).toBe('fulfilled');
    const warned = logLines(first.lines).find((l) => l.message === 'completion does not match the job ledger, ignored');
    expect(warned).toMatchObject({
      level: 'WARN',
      service: SERVICE,
      function_request_id: 'rel-1',
      jobId: 'job-1',
      kind: 'appflow',
      executionId: 'exec-1',
    });
    expect(failed.result.status).toBe('rejected');
    for (const [next, requestId] of [
      [second, 'rel-2'],
      [fourth, 'rel-4'],
    ] as const) {
      const dropped = logLines(next.lines).find((l) => l.message === 'malformed completion event dropped');
      expect(dropped).toMatchObject({ level: 'ERROR', function_request_id: requestId });
      expect(dropped).not.toHaveProperty('kind');
      expect(dropped).not.toHaveProperty('executionId');
    }
  });
});
