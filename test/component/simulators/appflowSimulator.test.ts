import {
  AppflowClient,
  CancelFlowExecutionsCommand,
  DescribeFlowExecutionRecordsCommand,
  ResourceNotFoundException,
  StartFlowCommand,
} from '@aws-sdk/client-appflow';
import { startJobApiSimulator, type EventBridgeEvent, type JobApiSimulator } from '../../../local/simulators';
import { credentials, rejection, sdkClients, waitFor } from './support';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let sim: JobApiSimulator;
let clients: ReturnType<typeof sdkClients>;
let received: EventBridgeEvent[];
let clockOffsetMs = 0;

beforeEach(async () => {
  received = [];
  clockOffsetMs = 0;
  sim = await startJobApiSimulator({
    // Tests that look at a run while it is running use a `mid-` or `slow-` name, so that a loaded machine cannot end it first.
    durationMs: (_kind, name) => (name.startsWith('slow') ? 5_000 : name.startsWith('mid') ? 300 : 80),
    outcome: (_kind, name) => (name.startsWith('failing') ? 'failed' : 'succeeded'),
    now: () => Date.now() + clockOffsetMs,
    emit: (event) => {
      received.push(event);
    },
  });
  clients = sdkClients(sim);
});

afterEach(async () => {
  clients.destroy();
  await sim.close();
});

test('StartFlow returns an executionId; the run ends after its duration with an End Flow Run Report', async () => {
  const started = await clients.appflow.send(new StartFlowCommand({ flowName: 'orders-sync', clientToken: 'job-1' }));
  expect(started.executionId).toMatch(UUID);
  expect(started.flowArn).toBe('arn:aws:appflow:us-east-1:123456789012:flow/orders-sync');
  expect(started.flowStatus).toBe('Active');

  const event = await waitFor(() => received[0], 2000, 'the end event');
  const [run] = sim.runs();
  expect(run).toMatchObject({
    kind: 'appflow',
    name: 'orders-sync',
    executionId: started.executionId,
    outcome: 'succeeded',
    status: 'Successful',
  });
  expect(run!.endedAt! - run!.startedAt).toBeGreaterThanOrEqual(79);

  expect(event).toEqual({
    version: '0',
    id: expect.stringMatching(UUID),
    'detail-type': 'AppFlow End Flow Run Report',
    source: 'aws.appflow',
    account: '123456789012',
    time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
    region: 'us-east-1',
    resources: [expect.stringMatching(/^[0-9a-f]{32}$/)],
    detail: expect.objectContaining({
      'flow-name': 'orders-sync',
      'flow-arn': 'arn:aws:appflow:us-east-1:123456789012:flow/orders-sync',
      'execution-id': started.executionId,
      status: 'Execution Successful',
      'trigger-type': 'ONDEMAND',
      'start-time': new Date(run!.startedAt).toISOString() + '[UTC]',
      'end-time': new Date(run!.endedAt!).toISOString() + '[UTC]',
      'num-of-records-processed': expect.stringMatching(/^\d+$/),
      'num-of-record-failures': '0',
    }),
  });
  for (const value of Object.values(event.detail as Record<string, unknown>)) expect(typeof value).toBe('string');
  expect(sim.emitted()).toEqual([expect.objectContaining({ kind: 'appflow', executionId: started.executionId, duplicate: false })]);
});

test('a failed run reports Error and "Execution Failed"', async () => {
  const { executionId } = await clients.appflow.send(new StartFlowCommand({ flowName: 'failing-flow' }));
  const event = await waitFor(() => received[0]);
  expect(event.detail).toMatchObject({ 'execution-id': executionId, status: 'Execution Failed', 'num-of-record-failures': '1' });
  const { flowExecutions } = await clients.appflow.send(new DescribeFlowExecutionRecordsCommand({ flowName: 'failing-flow' }));
  expect(flowExecutions?.[0]).toMatchObject({
    executionId,
    executionStatus: 'Error',
    executionResult: { errorInfo: { executionMessage: 'Simulated failure' } },
  });
});

test('the same (flowName, clientToken) within 8 hours returns the same executionId and starts no second run', async () => {
  const first = await clients.appflow.send(new StartFlowCommand({ flowName: 'orders-sync', clientToken: 'job-42' }));
  const again = await clients.appflow.send(new StartFlowCommand({ flowName: 'orders-sync', clientToken: 'job-42' }));
  expect(again.executionId).toBe(first.executionId);
  expect(sim.runs()).toHaveLength(1);
  expect(sim.startCalls().map((c) => [c.ok, c.executionId, c.idempotentReplay ?? false])).toEqual([
    [true, first.executionId, false],
    [true, first.executionId, true],
  ]);

  // Another flow with the same token is another run; so is a call without a token (the SDK makes up a random one).
  const other = await clients.appflow.send(new StartFlowCommand({ flowName: 'other-flow', clientToken: 'job-42' }));
  const untokened = await clients.appflow.send(new StartFlowCommand({ flowName: 'orders-sync' }));
  expect(new Set([first.executionId, other.executionId, untokened.executionId]).size).toBe(3);

  // Still the same after the run ended; a new run once the 8 hours are over.
  await waitFor(() => sim.inProgress() === 0);
  expect((await clients.appflow.send(new StartFlowCommand({ flowName: 'orders-sync', clientToken: 'job-42' }))).executionId).toBe(
    first.executionId,
  );
  clockOffsetMs = 8 * 60 * 60 * 1000 + 1;
  const later = await clients.appflow.send(new StartFlowCommand({ flowName: 'orders-sync', clientToken: 'job-42' }));
  expect(later.executionId).not.toBe(first.executionId);
  expect(sim.runs()).toHaveLength(4);
});

test('DescribeFlowExecutionRecords shows InProgress, then Successful', async () => {
  const { executionId } = await clients.appflow.send(new StartFlowCommand({ flowName: 'mid-flow' }));
  const during = await clients.appflow.send(new DescribeFlowExecutionRecordsCommand({ flowName: 'mid-flow', maxResults: 10 }));
  expect(during.flowExecutions).toEqual([
    expect.objectContaining({ executionId, executionStatus: 'InProgress', startedAt: expect.any(Date) }),
  ]);
  expect(during.flowExecutions?.[0]?.dataPullEndTime).toBeUndefined();

  await waitFor(() => received.length === 1);
  const after = await clients.appflow.send(new DescribeFlowExecutionRecordsCommand({ flowName: 'mid-flow' }));
  const record = after.flowExecutions?.[0];
  expect(record).toMatchObject({ executionId, executionStatus: 'Successful', executionResult: { recordsProcessed: 100 } });
  expect(record!.lastUpdatedAt!.getTime()).toBe(Math.floor(sim.runs()[0]!.endedAt!));
});

test('DescribeFlowExecutionRecords lists newest first and pages with nextToken', async () => {
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) ids.push((await clients.appflow.send(new StartFlowCommand({ flowName: 'paged' }))).executionId!);
  const page1 = await clients.appflow.send(new DescribeFlowExecutionRecordsCommand({ flowName: 'paged', maxResults: 2 }));
  expect(page1.flowExecutions?.map((e) => e.executionId)).toEqual([ids[2], ids[1]]);
  const page2 = await clients.appflow.send(
    new DescribeFlowExecutionRecordsCommand({ flowName: 'paged', maxResults: 2, nextToken: page1.nextToken! }),
  );
  expect(page2.flowExecutions?.map((e) => e.executionId)).toEqual([ids[0]]);
  expect(page2.nextToken).toBeUndefined();
});

test('CancelFlowExecutions ends the run as Canceled and emits its event; unknown ids come back invalid', async () => {
  const { executionId } = await clients.appflow.send(new StartFlowCommand({ flowName: 'slow-flow' }));
  const res = await clients.appflow.send(
    new CancelFlowExecutionsCommand({ flowName: 'slow-flow', executionIds: [executionId!, 'no-such-run'] }),
  );
  expect(res.invalidExecutions).toEqual(['no-such-run']);
  expect(sim.runs()[0]).toMatchObject({ outcome: 'stopped', status: 'Canceled' });
  expect(received.map((e) => (e.detail as Record<string, string>).status)).toEqual(['Execution Canceled']);
  const { flowExecutions } = await clients.appflow.send(new DescribeFlowExecutionRecordsCommand({ flowName: 'slow-flow' }));
  expect(flowExecutions?.[0]?.executionStatus).toBe('Canceled');
  expect(sim.inProgress()).toBe(0);
});

test('the endpoint can come from AWS_ENDPOINT_URL_APPFLOW', async () => {
  const saved = process.env.AWS_ENDPOINT_URL_APPFLOW;
  process.env.AWS_ENDPOINT_URL_APPFLOW = sim.endpoint;
  const client = new AppflowClient({ region: 'us-east-1', credentials, maxAttempts: 1 });
  try {
    const { executionId } = await client.send(new StartFlowCommand({ flowName: 'from-env' }));
    expect(sim.runs().map((r) => r.executionId)).toEqual([executionId]);
  } finally {
    client.destroy();
    if (saved === undefined) delete process.env.AWS_ENDPOINT_URL_APPFLOW;
    else process.env.AWS_ENDPOINT_URL_APPFLOW = saved;
  }
});

test('with knownNames, other flows are ResourceNotFoundException (404)', async () => {
  const strict = await startJobApiSimulator({ knownNames: { appflow: ['known'] }, durationMs: 20 });
  const client = new AppflowClient({ endpoint: strict.endpoint, region: 'us-east-1', credentials, maxAttempts: 1 });
  try {
    const error = await rejection(client.send(new StartFlowCommand({ flowName: 'unknown' })));
    expect(error).toBeInstanceOf(ResourceNotFoundException);
    expect(error.$metadata?.httpStatusCode).toBe(404);
    expect(strict.startCalls()).toEqual([expect.objectContaining({ ok: false, error: 'ResourceNotFoundException', name: 'unknown' })]);
    await expect(client.send(new StartFlowCommand({ flowName: 'known' }))).resolves.toHaveProperty('executionId');
  } finally {
    client.destroy();
    await strict.close();
  }
});
