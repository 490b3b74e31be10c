import {
  BatchStopJobRunCommand,
  ConcurrentRunsExceededException,
  EntityNotFoundException,
  GetJobRunCommand,
  GetJobRunsCommand,
  StartJobRunCommand,
} from '@aws-sdk/client-glue';
import { startJobApiSimulator, type EventBridgeEvent, type JobApiSimulator } from '../../../local/simulators';
import { rejection, sdkClients, waitFor } from './support';

let sim: JobApiSimulator;
let clients: ReturnType<typeof sdkClients>;
let received: EventBridgeEvent[];

beforeEach(async () => {
  received = [];
  sim = await startJobApiSimulator({
    // Tests that look at a run while it is running use a `mid-` or `slow-` name, so that a loaded machine cannot end it first.
    durationMs: (_kind, name) => (name.startsWith('slow') ? 5_000 : name.startsWith('mid') ? 300 : 80),
    outcome: (_kind, _name, args) => (args['--outcome'] as 'failed' | 'timeout' | undefined) ?? 'succeeded',
    glueMaxConcurrentRuns: { 'slow-pair': 2, 'slow-limited': 1 },
    emit: async (event) => {
      received.push(event);
    },
  });
  clients = sdkClients(sim);
});

afterEach(async () => {
  clients.destroy();
  await sim.close();
});

test('StartJobRun returns a JobRunId; GetJobRun shows RUNNING, then SUCCEEDED, and a Glue Job State Change is emitted', async () => {
  const { JobRunId } = await clients.glue.send(new StartJobRunCommand({ JobName: 'mid-etl', Arguments: { '--day': '2024-01-01' } }));
  expect(JobRunId).toMatch(/^jr_[0-9a-f]{64}$/);

  const during = await clients.glue.send(new GetJobRunCommand({ JobName: 'mid-etl', RunId: JobRunId }));
  expect(during.JobRun).toMatchObject({
    Id: JobRunId,
    JobName: 'mid-etl',
    JobRunState: 'RUNNING',
    Arguments: { '--day': '2024-01-01' },
    StartedOn: expect.any(Date),
  });
  expect(during.JobRun?.CompletedOn).toBeUndefined();

  const event = await waitFor(() => received[0]);
  expect(event).toEqual({
    version: '0',
    id: expect.any(String),
    'detail-type': 'Glue Job State Change',
    source: 'aws.glue',
    account: '123456789012',
    time: expect.stringMatching(/Z$/),
    region: 'us-east-1',
    resources: [],
    detail: { jobName: 'mid-etl', severity: 'INFO', state: 'SUCCEEDED', jobRunId: JobRunId, message: 'Job run succeeded' },
  });
  const after = await clients.glue.send(new GetJobRunCommand({ JobName: 'mid-etl', RunId: JobRunId }));
  expect(after.JobRun).toMatchObject({ JobRunState: 'SUCCEEDED', CompletedOn: expect.any(Date) });
  expect(after.JobRun!.CompletedOn!.getTime()).toBe(Math.floor(sim.runs()[0]!.endedAt!));
});

test('FAILED and TIMEOUT runs carry an ErrorMessage and the matching event', async () => {
  const failed = await clients.glue.send(new StartJobRunCommand({ JobName: 'etl', Arguments: { '--outcome': 'failed' } }));
  const timedOut = await clients.glue.send(new StartJobRunCommand({ JobName: 'etl', Arguments: { '--outcome': 'timeout' } }));
  await waitFor(() => received.length === 2);
  const byRun = new Map(received.map((e) => [(e.detail as { jobRunId: string }).jobRunId, e.detail]));
  expect(byRun.get(failed.JobRunId!)).toMatchObject({ state: 'FAILED', severity: 'ERROR', message: 'Simulated failure' });
  expect(byRun.get(timedOut.JobRunId!)).toMatchObject({ state: 'TIMEOUT', severity: 'WARN' });
  const run = await clients.glue.send(new GetJobRunCommand({ JobName: 'etl', RunId: failed.JobRunId }));
  expect(run.JobRun).toMatchObject({ JobRunState: 'FAILED', ErrorMessage: 'Simulated failure' });
});

test('every StartJobRun starts a run; GetJobRuns lists them newest first, with paging', async () => {
  const ids: string[] = [];
  for (let i = 0; i < 3; i++)
    ids.push((await clients.glue.send(new StartJobRunCommand({ JobName: 'slow-etl', Arguments: { '--same': 'args' } }))).JobRunId!);
  expect(new Set(ids).size).toBe(3);
  expect(sim.inProgress()).toBe(3);

  const page1 = await clients.glue.send(new GetJobRunsCommand({ JobName: 'slow-etl', MaxResults: 2 }));
  expect(page1.JobRuns?.map((r) => r.Id)).toEqual([ids[2], ids[1]]);
  const page2 = await clients.glue.send(new GetJobRunsCommand({ JobName: 'slow-etl', MaxResults: 2, NextToken: page1.NextToken }));
  expect(page2.JobRuns?.map((r) => r.Id)).toEqual([ids[0]]);
  expect(page2.NextToken).toBeUndefined();
  expect((await clients.glue.send(new GetJobRunsCommand({ JobName: 'never-ran' }))).JobRuns).toEqual([]);
});

test('GetJobRun of an unknown run is EntityNotFoundException', async () => {
  const error = await rejection(clients.glue.send(new GetJobRunCommand({ JobName: 'etl', RunId: 'jr_nope' })));
  expect(error).toBeInstanceOf(EntityNotFoundException);
});

test("a job's MaxConcurrentRuns gives ConcurrentRunsExceededException; other jobs are not limited", async () => {
  await clients.glue.send(new StartJobRunCommand({ JobName: 'slow-limited' }));
  const error = await rejection(clients.glue.send(new StartJobRunCommand({ JobName: 'slow-limited' })));
  expect(error).toBeInstanceOf(ConcurrentRunsExceededException);
  expect(error.name).toBe('ConcurrentRunsExceededException');
  expect(error.message).toContain('slow-limited');

  const pair: string[] = [];
  for (let i = 0; i < 2; i++) pair.push((await clients.glue.send(new StartJobRunCommand({ JobName: 'slow-pair' }))).JobRunId!);
  await expect(clients.glue.send(new StartJobRunCommand({ JobName: 'slow-pair' }))).rejects.toThrow(ConcurrentRunsExceededException);
  for (let i = 0; i < 3; i++) await clients.glue.send(new StartJobRunCommand({ JobName: 'slow-unlimited' }));

  // Once one of the pair has ended, there is room again.
  await clients.glue.send(new BatchStopJobRunCommand({ JobName: 'slow-pair', JobRunIds: [pair[0]!] }));
  await expect(clients.glue.send(new StartJobRunCommand({ JobName: 'slow-pair' }))).resolves.toHaveProperty('JobRunId');
  expect(
    sim
      .startCalls()
      .filter((c) => !c.ok)
      .map((c) => c.error),
  ).toEqual(['ConcurrentRunsExceededException', 'ConcurrentRunsExceededException']);
});

test('BatchStopJobRun ends a run as STOPPED and emits its event; other ids come back as errors', async () => {
  const { JobRunId } = await clients.glue.send(new StartJobRunCommand({ JobName: 'slow-etl' }));
  const res = await clients.glue.send(new BatchStopJobRunCommand({ JobName: 'slow-etl', JobRunIds: [JobRunId!, 'jr_unknown'] }));
  expect(res.SuccessfulSubmissions).toEqual([{ JobName: 'slow-etl', JobRunId }]);
  expect(res.Errors).toEqual([
    expect.objectContaining({ JobRunId: 'jr_unknown', ErrorDetail: expect.objectContaining({ ErrorCode: 'InvalidInputException' }) }),
  ]);
  expect(received.map((e) => e.detail)).toEqual([expect.objectContaining({ jobRunId: JobRunId, state: 'STOPPED' })]);
  expect((await clients.glue.send(new GetJobRunCommand({ JobName: 'slow-etl', RunId: JobRunId }))).JobRun?.JobRunState).toBe('STOPPED');
  expect(sim.inProgress()).toBe(0);
});

test('with stopDelayMs a stopped run is STOPPING (still in progress) before it is STOPPED', async () => {
  sim.configure({ stopDelayMs: 300 });
  const { JobRunId } = await clients.glue.send(new StartJobRunCommand({ JobName: 'slow-etl' }));
  await clients.glue.send(new BatchStopJobRunCommand({ JobName: 'slow-etl', JobRunIds: [JobRunId!] }));
  expect((await clients.glue.send(new GetJobRunCommand({ JobName: 'slow-etl', RunId: JobRunId }))).JobRun?.JobRunState).toBe('STOPPING');
  expect(sim.inProgress()).toBe(1);
  await waitFor(() => received.length === 1);
  expect(sim.runs()[0]).toMatchObject({ status: 'STOPPED', outcome: 'stopped' });
});
