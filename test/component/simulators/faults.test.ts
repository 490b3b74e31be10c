import { DescribeFlowExecutionRecordsCommand, StartFlowCommand, ThrottlingException as AppFlowThrottling } from '@aws-sdk/client-appflow';
import {
  AccessDeniedException,
  ConcurrentRunsExceededException,
  GetJobRunCommand,
  GetJobRunsCommand,
  StartJobRunCommand,
  ThrottlingException as GlueThrottling,
} from '@aws-sdk/client-glue';
import { jobApiSimulatorControl, startJobApiSimulator, type EventBridgeEvent, type JobApiSimulator } from '../../../local/simulators';
import { rejection, sdkClients, waitFor } from './support';

let sim: JobApiSimulator;
let clients: ReturnType<typeof sdkClients>;
let received: EventBridgeEvent[];

beforeEach(async () => {
  received = [];
  sim = await startJobApiSimulator({ durationMs: 40, emit: (e) => void received.push(e) });
  clients = sdkClients(sim);
});

afterEach(async () => {
  clients.destroy();
  await sim.close();
});

const startFlow = (flowName = 'flow') => clients.appflow.send(new StartFlowCommand({ flowName }));
const startJob = (JobName = 'job') => clients.glue.send(new StartJobRunCommand({ JobName }));

test('throttleStarts: the SDK throws a ThrottlingException (429 on AppFlow, 400 on Glue); nothing starts', async () => {
  sim.setFaults({ throttleStarts: 1 }); // top level: one for each kind
  const flowError = await rejection(startFlow());
  expect(flowError).toBeInstanceOf(AppFlowThrottling);
  expect(flowError.name).toBe('ThrottlingException');
  expect(flowError.$metadata?.httpStatusCode).toBe(429);
  const jobError = await rejection(startJob());
  expect(jobError).toBeInstanceOf(GlueThrottling);
  expect(jobError.$metadata?.httpStatusCode).toBe(400);
  expect(sim.runs()).toEqual([]);
  expect(sim.startCalls().map((c) => [c.kind, c.ok, c.error])).toEqual([
    ['appflow', false, 'ThrottlingException'],
    ['glue', false, 'ThrottlingException'],
  ]);
  // Used up: the next starts work.
  await startFlow();
  await startJob();
  expect(sim.runs()).toHaveLength(2);
  expect(sim.faults().appflow.throttleStarts).toBe(0);
});

test('the SDK retries a simulated throttle by itself when maxAttempts allows', async () => {
  const retrying = sdkClients(sim, 3);
  try {
    sim.setFaults({ glue: { throttleStarts: 1 } });
    const res = await retrying.glue.send(new StartJobRunCommand({ JobName: 'job' }));
    expect(res.$metadata.attempts).toBe(2);
    expect(sim.startCalls().map((c) => c.error ?? 'ok')).toEqual(['ThrottlingException', 'ok']);
  } finally {
    retrying.destroy();
  }
});

test('failStarts fails the next n starts of one kind with the named error', async () => {
  sim.setFaults({ glue: { failStarts: { count: 2, error: 'AccessDeniedException', message: 'no glue for you' } } });
  await startFlow(); // AppFlow is not affected
  for (let i = 0; i < 2; i++) {
    const error = await rejection(startJob());
    expect(error).toBeInstanceOf(AccessDeniedException);
    expect(error.message).toBe('no glue for you');
  }
  await startJob();
  expect(sim.faults().glue.failStarts).toBeUndefined();
  expect(sim.startCalls().map((c) => `${c.kind}:${c.error ?? 'ok'}`)).toEqual([
    'appflow:ok',
    'glue:AccessDeniedException',
    'glue:AccessDeniedException',
    'glue:ok',
  ]);
});

test('failStarts with namePrefix fails only starts of names beginning with it; other names do not use it up', async () => {
  sim.setFaults({ glue: { failStarts: { count: 2, error: 'ConcurrentRunsExceededException', namePrefix: 'steady-' } } });
  await startJob('other'); // not matched: starts, and the counter stays
  expect(sim.faults().glue.failStarts?.count).toBe(2);
  expect(await rejection(startJob('steady-1'))).toBeInstanceOf(ConcurrentRunsExceededException);
  await startJob('other');
  expect(await rejection(startJob('steady-2'))).toBeInstanceOf(ConcurrentRunsExceededException);
  await startJob('steady-1');
  expect(sim.faults().glue.failStarts).toBeUndefined();
  expect(sim.startCalls().map((c) => `${c.name}:${c.error ?? 'ok'}`)).toEqual([
    'other:ok',
    'steady-1:ConcurrentRunsExceededException',
    'other:ok',
    'steady-2:ConcurrentRunsExceededException',
    'steady-1:ok',
  ]);
});

test('failStartsAfterStarting (Glue): the run is created, the answer is a 500 InternalServiceException; the run goes on, is listed and emits', async () => {
  sim.configure({ durationMs: 150 });
  sim.setFaults({ glue: { failStartsAfterStarting: { count: 1, error: 'InternalServiceException' } } });
  const error = await rejection(clients.glue.send(new StartJobRunCommand({ JobName: 'job', Arguments: { '--sluice-job-id': 'j1' } })));
  expect(error.name).toBe('InternalServiceException');
  expect(error.$metadata?.httpStatusCode).toBe(500);
  const [run] = sim.runs();
  expect(run).toMatchObject({ kind: 'glue', name: 'job', args: { '--sluice-job-id': 'j1' } });
  expect(sim.startCalls()).toEqual([
    expect.objectContaining({ ok: false, error: 'InternalServiceException', executionId: run!.executionId }),
  ]);
  const { JobRuns } = await clients.glue.send(new GetJobRunsCommand({ JobName: 'job' }));
  expect(JobRuns?.map((r) => [r.Id, r.JobRunState, r.Arguments?.['--sluice-job-id']])).toEqual([[run!.executionId, 'RUNNING', 'j1']]);
  await waitFor(() => received.length === 1);
  expect(sim.emitted()[0]!.executionId).toBe(run!.executionId);
  // Used up: the next start answers normally (and makes a second run: Glue has no idempotency token).
  await startJob();
  expect(sim.faults().glue.failStartsAfterStarting).toBeUndefined();
  expect(sim.runs()).toHaveLength(2);
});

test('failStartsAfterStarting (AppFlow): a 500 InternalServerException after the run exists; the same client token then finds that run', async () => {
  sim.configure({ durationMs: 300 });
  sim.setFaults({ appflow: { failStartsAfterStarting: { count: 2, error: 'InternalServerException', namePrefix: 'flow' } } });
  const error = await rejection(clients.appflow.send(new StartFlowCommand({ flowName: 'flow', clientToken: 'sluice-a' })));
  expect(error.name).toBe('InternalServerException');
  expect(error.$metadata?.httpStatusCode).toBe(500);
  const [run] = sim.runs();
  const { flowExecutions } = await clients.appflow.send(new DescribeFlowExecutionRecordsCommand({ flowName: 'flow' }));
  expect(flowExecutions?.map((e) => [e.executionId, e.executionStatus])).toEqual([[run!.executionId, 'InProgress']]);
  // A replay of the token creates no run, so it answers normally and does not use the fault up.
  const replay = await clients.appflow.send(new StartFlowCommand({ flowName: 'flow', clientToken: 'sluice-a' }));
  expect(replay.executionId).toBe(run!.executionId);
  expect(sim.faults().appflow.failStartsAfterStarting?.count).toBe(1);
  expect(sim.runs()).toHaveLength(1);
  expect(sim.startCalls().map((c) => [c.ok, c.error, c.executionId, c.idempotentReplay])).toEqual([
    [false, 'InternalServerException', run!.executionId, undefined],
    [true, undefined, run!.executionId, true],
  ]);
  // Glue starts are not affected by an AppFlow fault.
  await startJob();
  expect(sim.runs()).toHaveLength(2);
});

test.each(['ServiceQuotaExceededException', 'ConflictException', 'ValidationException'])(
  'failStarts %s reaches the AppFlow SDK by name',
  async (errorName) => {
    sim.setFaults({ appflow: { failStarts: { count: 1, error: errorName } } });
    expect((await rejection(startFlow())).name).toBe(errorName);
  },
);

test('dropEvents: the run ends and the status API says so, but no event is emitted', async () => {
  sim.setFaults({ glue: { dropEvents: 1 } });
  const { JobRunId } = await startJob();
  await waitFor(() => sim.inProgress() === 0);
  const run = await clients.glue.send(new GetJobRunCommand({ JobName: 'job', RunId: JobRunId }));
  expect(run.JobRun?.JobRunState).toBe('SUCCEEDED');
  expect(received).toEqual([]);
  expect(sim.emitted()).toEqual([]);
  expect(sim.droppedEvents()).toEqual([expect.objectContaining({ kind: 'glue', executionId: JobRunId })]);
  // Only one was dropped.
  await startJob();
  await waitFor(() => received.length === 1);
});

test('duplicateEvents: the end event is emitted twice, with the same event id', async () => {
  sim.setFaults({ appflow: { duplicateEvents: 1 } });
  const { executionId } = await startFlow();
  await waitFor(() => received.length === 2);
  expect(received[0]).toEqual(received[1]);
  expect((received[0]!.detail as Record<string, string>)['execution-id']).toBe(executionId);
  expect(sim.emitted().map((e) => e.duplicate)).toEqual([false, true]);
});

test('delayEventsMs: the event comes that long after the run ended', async () => {
  sim.setFaults({ delayEventsMs: 120 });
  await startJob();
  await waitFor(() => sim.inProgress() === 0);
  expect(received).toEqual([]);
  const emitted = await waitFor(() => sim.emitted()[0]);
  expect(emitted.at - sim.runs()[0]!.endedAt!).toBeGreaterThanOrEqual(119);
});

test('startLatencyMs: start calls answer late, and the run begins after the latency', async () => {
  sim.setFaults({ appflow: { startLatencyMs: 100 } });
  await startFlow();
  const [call] = sim.startCalls();
  const [run] = sim.runs();
  expect(call!.respondedAt - call!.at).toBeGreaterThanOrEqual(99);
  expect(run!.startedAt - run!.startCallAt).toBeGreaterThanOrEqual(99);
});

test('throttleStatusCalls throttles the status API', async () => {
  const { JobRunId } = await startJob();
  sim.setFaults({ glue: { throttleStatusCalls: 1 } });
  expect(await rejection(clients.glue.send(new GetJobRunCommand({ JobName: 'job', RunId: JobRunId })))).toBeInstanceOf(GlueThrottling);
  await expect(clients.glue.send(new GetJobRunCommand({ JobName: 'job', RunId: JobRunId }))).resolves.toHaveProperty('JobRun');
});

test('failCalls answers the next n calls of one operation with any error, in its HTTP status; merged per operation, cleared by undefined', async () => {
  sim.setFaults({ glue: { failCalls: { GetJobRuns: { count: 2, error: 'AccessDeniedException', message: 'no glue:GetJobRuns' } } } });
  sim.setFaults({ glue: { failCalls: { GetJobRun: { count: 1, error: 'OperationTimeoutException' } } } });
  const { JobRunId } = await startJob('job'); // another operation: untouched
  const denied = await rejection(clients.glue.send(new GetJobRunsCommand({ JobName: 'job' })));
  expect(denied).toBeInstanceOf(AccessDeniedException);
  expect([denied.message, denied.$metadata?.httpStatusCode]).toEqual(['no glue:GetJobRuns', 400]);
  expect(sim.faults().glue.failCalls).toMatchObject({ GetJobRuns: { count: 1 }, GetJobRun: { count: 1 } });
  const timedOut = await rejection(clients.glue.send(new GetJobRunCommand({ JobName: 'job', RunId: JobRunId! })));
  expect(timedOut.name).toBe('OperationTimeoutException');
  sim.setFaults({ glue: { failCalls: { GetJobRuns: undefined } } });
  expect(sim.faults().glue.failCalls).toBeUndefined();
  await clients.glue.send(new GetJobRunsCommand({ JobName: 'job' }));
  // An error the SDK does not model comes with the common errors' status; a REST-JSON one with its own.
  sim.setFaults({ appflow: { failCalls: { DescribeFlowExecutionRecords: { count: 1, error: 'ServiceUnavailable' } } } });
  const unavailable = await rejection(clients.appflow.send(new DescribeFlowExecutionRecordsCommand({ flowName: 'flow' })));
  expect([unavailable.name, unavailable.$metadata?.httpStatusCode]).toEqual(['ServiceUnavailable', 503]);
  sim.setFaults({ appflow: { failCalls: { StartFlow: { count: 1, error: 'ServiceQuotaExceededException' } } } });
  const quota = await rejection(startFlow());
  expect([quota.name, quota.$metadata?.httpStatusCode]).toEqual(['ServiceQuotaExceededException', 402]);
  expect(sim.runs().map((r) => r.kind)).toEqual(['glue']);
});

test('failCalls through the control API (a simulator in another process): the same fault, as JSON', async () => {
  const control = jobApiSimulatorControl(sim.endpoint);
  const state = await control.setFaults({
    appflow: { failCalls: { StartFlow: { count: 1, error: 'ConflictException', message: 'busy' } } },
  });
  expect(state.appflow.failCalls).toEqual({ StartFlow: { count: 1, error: 'ConflictException', message: 'busy' } });
  const conflict = await rejection(startFlow());
  expect([conflict.name, conflict.message, conflict.$metadata?.httpStatusCode]).toEqual(['ConflictException', 'busy', 409]);
  expect((await control.faults()).appflow.failCalls).toBeUndefined();
});

test('an emit that throws or rejects is recorded and does not crash anything', async () => {
  const errors: unknown[] = [];
  const flaky = await startJobApiSimulator({
    durationMs: 10,
    emit: (event) => {
      if ((event.detail as { jobName?: string }).jobName === 'sync-throw') throw new Error('boom');
      return Promise.reject(new Error('bus down'));
    },
    onEmitError: (error) => errors.push(error),
  });
  const c = sdkClients(flaky);
  try {
    await c.glue.send(new StartJobRunCommand({ JobName: 'sync-throw' }));
    await c.glue.send(new StartJobRunCommand({ JobName: 'async-reject' }));
    await waitFor(() => flaky.emitted().filter((e) => e.emitError).length === 2);
    expect(
      flaky
        .emitted()
        .map((e) => e.emitError)
        .sort(),
    ).toEqual(['boom', 'bus down']);
    expect(errors).toHaveLength(2);
  } finally {
    c.destroy();
    await flaky.close();
  }
});

test('reset() forgets records and faults but lets runs in progress finish', async () => {
  sim.setFaults({ appflow: { throttleStarts: 5 } });
  await startJob('quick');
  await waitFor(() => sim.inProgress() === 0);
  sim.configure({ durationMs: 300 });
  const { JobRunId } = await startJob('longer');
  sim.reset();
  expect(sim.faults().appflow.throttleStarts).toBe(0);
  expect(sim.startCalls()).toEqual([]);
  expect(sim.runs().map((r) => r.executionId)).toEqual([JobRunId]);
  expect(await rejection(clients.glue.send(new GetJobRunCommand({ JobName: 'quick', RunId: 'x' })))).toHaveProperty(
    'name',
    'EntityNotFoundException',
  );
  await waitFor(() => sim.emitted().length === 1);
  expect(sim.emitted()[0]!.executionId).toBe(JobRunId);
  // configure() survives reset
  await startFlow();
  expect(sim.runs()[1]!.endedAt).toBeUndefined();
});
