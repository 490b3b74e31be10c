import { DescribeFlowExecutionRecordsCommand, StartFlowCommand } from '@aws-sdk/client-appflow';
import { GetJobRunsCommand, StartJobRunCommand } from '@aws-sdk/client-glue';
import { AppFlowStarter } from '../../../shared/kinds/appflow/starter';
import { GlueStarter, JOB_ID_ARGUMENT } from '../../../shared/kinds/glue/starter';
import { RunStatus } from '../../../shared/ports/jobStarter';
import { startJobApiSimulator, type JobApiSimulator } from '../../../local/simulators';
import { sdkClients } from './support';
import type { AppFlowJob, GlueJob } from '../../../shared/kinds/registry';

/**
 * A busy job: 700 runs start after ours. The lookups go through the real SDK clients to the simulator, which lists
 * runs newest first and pages with opaque tokens (Glue documents that order; AppFlow documents none).
 */
const BUSY = 700;
const T0 = Date.parse('2026-11-22T00:00:00Z');

// Each test starts hundreds of runs through the SDK (a few seconds on a loaded machine).
jest.setTimeout(30_000);

let sim: JobApiSimulator;
let clients: ReturnType<typeof sdkClients>;
let clock: number;

beforeEach(async () => {
  clock = T0;
  // Every run stays in progress (the test ends first); close() clears their timers.
  sim = await startJobApiSimulator({ durationMs: 600_000, now: () => clock });
  clients = sdkClients(sim);
});

afterEach(async () => {
  clients.destroy();
  await sim.close();
});

/** Starts `count` runs through the SDK, 50 at a time. */
async function startMany(count: number, start: (i: number) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < count; i += 50) await Promise.all(Array.from({ length: Math.min(50, count - i) }, (_, j) => start(i + j)));
}

const glueJob: GlueJob = { id: 'job-ours', pool: 'etl', kind: 'glue', jobName: 'busy-etl' };
const otherGlueRun = (i: number) =>
  clients.glue.send(new StartJobRunCommand({ JobName: 'busy-etl', Arguments: { [JOB_ID_ARGUMENT]: `other-${i}` } }));

describe('Glue: a resumed start finds the first run of a busy job', () => {
  test(`finds its run under ${BUSY} newer runs instead of starting a second one, with and without requestedSince`, async () => {
    const starter = new GlueStarter(clients.glue);
    const { executionId } = await starter.start(glueJob);
    clock += 1000;
    await startMany(BUSY, otherGlueRun);
    const startsBefore = sim.startCalls().length;

    await expect(starter.start(glueJob, { mayHaveStarted: true, requestedSince: T0 })).resolves.toEqual({ executionId });
    await expect(starter.start(glueJob, { mayHaveStarted: true })).resolves.toEqual({ executionId });
    expect(sim.startCalls()).toHaveLength(startsBefore);
    expect(sim.runs().filter((r) => r.args[JOB_ID_ARGUMENT] === glueJob.id)).toHaveLength(1);
  });

  test('a job that never started: the lookup stops at runs older than its request and starts it once', async () => {
    await startMany(600, otherGlueRun); // a longer history, an hour before
    clock += 3600_000;
    const requestedSince = clock;
    await startMany(500, otherGlueRun);
    const send = jest.spyOn(clients.glue, 'send');

    const { executionId } = await new GlueStarter(clients.glue).start(glueJob, { mayHaveStarted: true, requestedSince });
    const lookups = send.mock.calls.filter(([command]) => command instanceof GetJobRunsCommand);
    // Pages 1-3 hold the 500 newer runs, page 4 only older ones: it stops there, before the 6th and last page.
    expect(lookups).toHaveLength(4);
    expect(
      sim
        .runs()
        .filter((r) => r.args[JOB_ID_ARGUMENT] === glueJob.id)
        .map((r) => r.executionId),
    ).toEqual([executionId]);
  });

  test('the simulator pages GetJobRuns without repeating or skipping runs while new ones start', async () => {
    await startMany(5, otherGlueRun);
    const page1 = await clients.glue.send(new GetJobRunsCommand({ JobName: 'busy-etl', MaxResults: 2 }));
    await startMany(3, (i) => otherGlueRun(100 + i));
    const page2 = await clients.glue.send(new GetJobRunsCommand({ JobName: 'busy-etl', MaxResults: 10, NextToken: page1.NextToken }));
    const listed = [...page1.JobRuns!, ...page2.JobRuns!].map((r) => r.Id);
    const firstFive = sim
      .runs()
      .slice(0, 5)
      .map((r) => r.executionId)
      .reverse();
    expect(listed).toEqual(firstFive);
    expect(page2.NextToken).toBeUndefined();
  });
});

const flowJob: AppFlowJob = { id: 'job-ours', pool: 'crm', kind: 'appflow', flowName: 'busy-flow' };

describe('AppFlow: the status of a run of a busy flow', () => {
  test(`is found under ${BUSY} newer execution records instead of Unknown, with and without requestedSince`, async () => {
    const starter = new AppFlowStarter(clients.appflow);
    const { executionId } = await starter.start(flowJob);
    clock += 1000;
    await startMany(BUSY, () => clients.appflow.send(new StartFlowCommand({ flowName: 'busy-flow' })));

    await expect(starter.status(flowJob, executionId, { requestedSince: T0 })).resolves.toBe(RunStatus.InProgress);
    await expect(starter.status(flowJob, executionId)).resolves.toBe(RunStatus.InProgress);
  });

  test('the simulator pages DescribeFlowExecutionRecords without repeating or skipping records while runs start', async () => {
    const startFlow = () => clients.appflow.send(new StartFlowCommand({ flowName: 'busy-flow' }));
    await startMany(5, startFlow);
    const page1 = await clients.appflow.send(new DescribeFlowExecutionRecordsCommand({ flowName: 'busy-flow', maxResults: 2 }));
    await startMany(3, startFlow);
    const page2 = await clients.appflow.send(
      new DescribeFlowExecutionRecordsCommand({ flowName: 'busy-flow', maxResults: 10, nextToken: page1.nextToken! }),
    );
    const listed = [...page1.flowExecutions!, ...page2.flowExecutions!].map((r) => r.executionId);
    expect(listed).toEqual(
      sim
        .runs()
        .slice(0, 5)
        .map((r) => r.executionId)
        .reverse(),
    );
  });
});
