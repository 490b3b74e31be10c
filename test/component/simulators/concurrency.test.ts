import { CancelFlowExecutionsCommand, StartFlowCommand } from '@aws-sdk/client-appflow';
import { BatchStopJobRunCommand, StartJobRunCommand } from '@aws-sdk/client-glue';
import { jobApiSimulatorControl, maxConcurrency, startJobApiSimulator, type JobApiSimulator, type SimRun } from '../../../local/simulators';
import { rejection, sdkClients, waitFor } from './support';

describe('maxObservedConcurrency', () => {
  let sim: JobApiSimulator;
  let clients: ReturnType<typeof sdkClients>;

  beforeEach(async () => {
    sim = await startJobApiSimulator({
      durationMs: (_kind, _name, args) => Number(args['--ms'] ?? 100),
      group: (kind, name, args) => args['--pool'] ?? `${kind}-default`,
    });
    clients = sdkClients(sim);
  });

  afterEach(async () => {
    clients.destroy();
    await sim.close();
  });

  const startJob = (ms: number, pool?: string) =>
    clients.glue.send(new StartJobRunCommand({ JobName: 'job', Arguments: { '--ms': String(ms), ...(pool ? { '--pool': pool } : {}) } }));

  test('is computed from the run timeline, overall and per group', async () => {
    // Runs last a minute; the test ends them with BatchStopJobRun / CancelFlowExecutions, so no timing can blur the waves.
    const stopJobs = async (ids: (string | undefined)[]) =>
      clients.glue.send(new BatchStopJobRunCommand({ JobName: 'job', JobRunIds: ids.map((id) => id!) }));
    // Wave 1: two overlapping runs in pool p1.
    const wave1 = await Promise.all([startJob(60_000, 'p1'), startJob(60_000, 'p1')]);
    expect(sim.inProgress()).toBe(2);
    await stopJobs(wave1.map((r) => r.JobRunId));
    // Wave 2, after wave 1 ended: three overlapping runs in pool p2, and one AppFlow run (its own default group).
    const wave2 = await Promise.all([startJob(60_000, 'p2'), startJob(60_000, 'p2'), startJob(60_000, 'p2')]);
    const flow = await clients.appflow.send(new StartFlowCommand({ flowName: 'flow' }));
    expect(sim.inProgress()).toBe(4);
    await stopJobs(wave2.map((r) => r.JobRunId));
    await clients.appflow.send(new CancelFlowExecutionsCommand({ flowName: 'flow', executionIds: [flow.executionId!] }));
    expect(sim.inProgress()).toBe(0);

    expect(sim.maxObservedConcurrency()).toBe(4);
    expect(sim.maxObservedConcurrency('p1')).toBe(2);
    expect(sim.maxObservedConcurrency('p2')).toBe(3);
    expect(sim.maxObservedConcurrency('appflow-default')).toBe(1);
    expect(sim.maxObservedConcurrency('no-such-group')).toBe(0);

    const timeline = sim.concurrencyTimeline('p1');
    expect(timeline.map((p) => p.inProgress).at(-1)).toBe(0);
    expect(Math.max(...timeline.map((p) => p.inProgress))).toBe(2);
    expect(timeline.every((p, i) => i === 0 || p.t > timeline[i - 1]!.t)).toBe(true);
    expect(sim.runs().every((r) => r.group !== undefined && r.endedAt! >= r.startedAt)).toBe(true);
  });

  test('a run that starts right after another ended does not count as overlapping', async () => {
    await startJob(30);
    await waitFor(() => sim.inProgress() === 0);
    await startJob(30);
    await waitFor(() => sim.inProgress() === 0);
    expect(sim.maxObservedConcurrency()).toBe(1);
  });
});

describe('maxConcurrency on a run timeline', () => {
  const run = (startedAt: number, startSeq: number, endedAt?: number, endSeq?: number): SimRun => ({
    kind: 'glue',
    name: 'j',
    executionId: `r${startSeq}`,
    args: {},
    startCallAt: startedAt,
    startedAt,
    status: 'RUNNING',
    startSeq,
    ...(endedAt !== undefined ? { endedAt, endSeq: endSeq! } : {}),
  });

  test('counts overlaps and breaks equal timestamps by the order the simulator saw them', () => {
    // r0 [0,10), r1 [5,20), r2 [10,30) starts at r0's end time AFTER r0 ended (seq 3 > 2), r3 still running.
    expect(maxConcurrency([run(0, 0, 10, 2), run(5, 1, 20, 4), run(10, 3, 30, 5), run(25, 6)])).toBe(2);
    // Same times, but r2 started before r0's end was seen: three at once.
    expect(maxConcurrency([run(0, 0, 10, 3), run(5, 1, 20, 4), run(10, 2, 30, 5)])).toBe(3);
    expect(maxConcurrency([])).toBe(0);
  });
});

test('close() stops the server and leaves no timers behind', async () => {
  // Server handles of this process besides the simulator's (a file that ran before in this worker may have left some).
  const servers = () => process.getActiveResourcesInfo().filter((r) => r === 'TCPServerWrap').length;
  const before = servers();
  const sim = await startJobApiSimulator({ durationMs: 60_000 });
  const clients = sdkClients(sim);
  await clients.glue.send(new StartJobRunCommand({ JobName: 'long' }));
  await clients.appflow.send(new StartFlowCommand({ flowName: 'long' }));
  sim.setFaults({ delayEventsMs: 60_000 });
  await clients.appflow.send(new CancelFlowExecutionsCommand({ flowName: 'long' })); // its event now waits on a timer
  expect(sim.pendingTimers()).toBe(2);
  clients.destroy();
  await sim.close();
  expect(sim.pendingTimers()).toBe(0);
  await sim.close(); // idempotent
  // The deadline only bounds a failure: a loaded machine may take a while to let the handle go.
  await waitFor(() => servers() <= before, 60_000, 'the server handle to go');
  expect(sim.emitted()).toEqual([]); // nothing is emitted after close
  const after = sdkClients(sim);
  try {
    await expect(after.glue.send(new StartJobRunCommand({ JobName: 'late' }))).rejects.toThrow();
  } finally {
    after.destroy();
  }
});

test('the control API drives a simulator from another process', async () => {
  const sim = await startJobApiSimulator({ durationMs: 400 });
  const clients = sdkClients(sim);
  const control = jobApiSimulatorControl(sim.endpoint);
  try {
    await control.setFaults({ appflow: { throttleStarts: 1 } });
    expect((await control.faults()).appflow.throttleStarts).toBe(1);
    expect((await rejection(clients.appflow.send(new StartFlowCommand({ flowName: 'f' })))).name).toBe('ThrottlingException');
    await control.configure({ outcome: 'failed' });
    await Promise.all([
      clients.glue.send(new StartJobRunCommand({ JobName: 'j' })),
      clients.glue.send(new StartJobRunCommand({ JobName: 'j' })),
    ]);
    await waitFor(async () => (await control.inProgress()) === 0);
    const records = await control.records();
    expect(records.runs.map((r) => r.status)).toEqual(['FAILED', 'FAILED']);
    expect(records.startCalls).toHaveLength(3);
    expect(records.emitted).toHaveLength(2);
    expect(await control.maxObservedConcurrency()).toBe(2);
    await control.reset();
    expect((await control.records()).runs).toEqual([]);
  } finally {
    clients.destroy();
    await sim.close();
  }
});
