import { DescribeFlowExecutionRecordsCommand, ResourceNotFoundException, StartFlowCommand } from '@aws-sdk/client-appflow';
import { EntityNotFoundException, GetJobRunCommand, GetJobRunsCommand, StartJobRunCommand } from '@aws-sdk/client-glue';
import { jobApiSimulatorControl, startJobApiSimulator, type EventBridgeEvent, type JobApiSimulator } from '../../../local/simulators';
import { rejection, sdkClients, waitFor } from './support';

/** A flow or Glue job deleted while one of its runs is in progress: the APIs no longer know it, the run still ends. */
let sim: JobApiSimulator;
let clients: ReturnType<typeof sdkClients>;
let received: EventBridgeEvent[];

beforeEach(async () => {
  received = [];
  sim = await startJobApiSimulator({ durationMs: 200, emit: (e) => void received.push(e) });
  clients = sdkClients(sim);
});

afterEach(async () => {
  clients.destroy();
  await sim.close();
});

test('deleteFlow: status and start calls answer ResourceNotFoundException (404); the run in progress ends on time and emits', async () => {
  const { executionId } = await clients.appflow.send(new StartFlowCommand({ flowName: 'gone', clientToken: 't' }));
  sim.deleteFlow('gone');

  const status = await rejection(clients.appflow.send(new DescribeFlowExecutionRecordsCommand({ flowName: 'gone' })));
  expect(status).toBeInstanceOf(ResourceNotFoundException);
  expect(status.$metadata?.httpStatusCode).toBe(404);
  // Even the token of the run it made: the flow is gone.
  expect(await rejection(clients.appflow.send(new StartFlowCommand({ flowName: 'gone', clientToken: 't' })))).toBeInstanceOf(
    ResourceNotFoundException,
  );
  // Other flows are untouched.
  await expect(clients.appflow.send(new DescribeFlowExecutionRecordsCommand({ flowName: 'kept' }))).resolves.toHaveProperty(
    'flowExecutions',
    [],
  );

  await waitFor(() => sim.inProgress() === 0);
  expect(sim.runs().map((r) => [r.executionId, r.status])).toEqual([[executionId, 'Successful']]);
  await waitFor(() => received.length === 1);
  expect(sim.startCalls().map((c) => c.error ?? 'ok')).toEqual(['ok', 'ResourceNotFoundException']);
});

test('deleteJob: GetJobRun, GetJobRuns and StartJobRun answer EntityNotFoundException; reset() brings the job back', async () => {
  const { JobRunId } = await clients.glue.send(new StartJobRunCommand({ JobName: 'gone' }));
  sim.deleteJob('gone');

  expect(await rejection(clients.glue.send(new GetJobRunCommand({ JobName: 'gone', RunId: JobRunId })))).toBeInstanceOf(
    EntityNotFoundException,
  );
  expect(await rejection(clients.glue.send(new GetJobRunsCommand({ JobName: 'gone' })))).toBeInstanceOf(EntityNotFoundException);
  expect(await rejection(clients.glue.send(new StartJobRunCommand({ JobName: 'gone' })))).toBeInstanceOf(EntityNotFoundException);
  expect(sim.runs()).toHaveLength(1);
  // A flow of the same name is another resource.
  await expect(clients.appflow.send(new DescribeFlowExecutionRecordsCommand({ flowName: 'gone' }))).resolves.toHaveProperty(
    'flowExecutions',
    [],
  );

  await waitFor(() => received.length === 1);
  sim.reset();
  await expect(clients.glue.send(new StartJobRunCommand({ JobName: 'gone' }))).resolves.toHaveProperty('JobRunId');
});

test('the control API deletes flows and jobs from another process', async () => {
  const control = jobApiSimulatorControl(sim.endpoint);
  await control.deleteFlow('f');
  await control.deleteJob('j');
  expect(await rejection(clients.appflow.send(new StartFlowCommand({ flowName: 'f' })))).toBeInstanceOf(ResourceNotFoundException);
  expect(await rejection(clients.glue.send(new GetJobRunsCommand({ JobName: 'j' })))).toBeInstanceOf(EntityNotFoundException);
  await expect(control.deleteJob('')).rejects.toThrow(/HTTP 400/);
  await expect(clients.glue.send(new StartJobRunCommand({ JobName: 'f' }))).resolves.toHaveProperty('JobRunId');
});
