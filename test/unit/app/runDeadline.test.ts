import { AcquireResult } from '../../../shared/app/acquireJob';
import { Drift } from '../../../shared/app/reconcile';
import { deliverSent, type FakeWorld, makeDeps, messageOf, parkGlueJob } from '../../support/fakes';
import type { JobSpec } from '../../../shared/kinds/registry';

/**
 * A run's own deadline (KindDefinition.runDeadline; callback jobs: `timeoutSeconds` from the start, `heartbeatSeconds`
 * from the last heartbeat): the reconciler ends a silent run as failed and frees its slot, fenced by what it read.
 */

const callbackJob = (id: string, times: { timeoutSeconds: number; heartbeatSeconds?: number }): JobSpec => ({
  id,
  pool: 'default',
  kind: 'callback',
  target: { lambda: 'sluice-worker' },
  payload: { order: id },
  ...times,
});

async function startCallback(world: FakeWorld, spec: JobSpec): Promise<string> {
  expect(await world.acquirer.process(messageOf(spec))).toBe(AcquireResult.Started);
  return world.ledger.peek(spec.id)!.executionId!;
}

describe('a run past its own deadline', () => {
  test('a callback job that never reports is ended as failed at its timeout, not before, and its slot goes to the next job', async () => {
    const world = makeDeps({ settings: { pools: { default: 1 } } });
    const run = await startCallback(world, callbackJob('c1', { timeoutSeconds: 600 }));
    await parkGlueJob(world, 'w1');
    world.clock.advance(600_000);
    expect((await world.reconciler.run()).drift).toEqual({});
    expect(world.ledger.peek('c1')!.state).toBe('running');

    world.clock.advance(1);
    expect((await world.reconciler.run()).drift).toEqual({ [Drift.DeadlinePassed]: 1 });
    expect(world.ledger.peek('c1')).toMatchObject({
      state: 'failed',
      executionId: run,
      lastError: 'timed out: no report within its timeout of 600 s',
    });
    expect(Object.keys(world.leases.poolView('default')!.holders)).toEqual(['w1']);
    expect((await deliverSent(world)).map((d) => d.result)).toEqual([AcquireResult.Started]);
    // Not stopped unless stopOverdueRuns.
    expect(world.starters.callback.stops).toEqual([]);
  });

  test('with heartbeatSeconds, each heartbeat moves the deadline; silence ends the run long before its timeout', async () => {
    const world = makeDeps();
    const run = await startCallback(world, callbackJob('c1', { timeoutSeconds: 3600, heartbeatSeconds: 60 }));
    world.clock.advance(50_000);
    expect(await world.ledger.heartbeat('c1', run, world.clock.now())).toBe(true);
    world.clock.advance(50_000); // 100 s after the start, 50 s after the heartbeat
    expect((await world.reconciler.run()).drift).toEqual({});
    expect(world.ledger.peek('c1')!.state).toBe('running');

    world.clock.advance(10_001); // 60 s and 1 ms after the heartbeat
    expect((await world.reconciler.run()).drift).toEqual({ [Drift.DeadlinePassed]: 1 });
    expect(world.ledger.peek('c1')).toMatchObject({ state: 'failed', lastError: 'timed out: no heartbeat for 60 s' });
    expect(world.leases.poolView('default')).toEqual(expect.objectContaining({ inUse: 0, holders: {} }));
  });

  test('a report noted before its run was recorded, which the recording invocation never applied, ends the run as it says, not the deadline', async () => {
    const world = makeDeps();
    // The report beats the acquirer's record of the run (noted on the run's key); the acquirer records the run and is
    // handed the report, but dies before applying it: the job is left running, the report kept on the run's key.
    const record = world.ledger.recordRun.bind(world.ledger);
    world.ledger.recordRun = async (ref, now) => {
      expect(
        await world.ledger.noteEarlyCompletion(
          { kind: ref.kind, executionId: ref.executionId, outcome: 'succeeded', name: 'sluice-worker' },
          now,
        ),
      ).toBe(true);
      expect(await record(ref, now)).toMatchObject({ outcome: 'succeeded' });
      return undefined;
    };
    const run = await startCallback(world, callbackJob('c1', { timeoutSeconds: 3600, heartbeatSeconds: 60 }));
    expect(world.ledger.peek('c1')!.state).toBe('running');
    world.clock.advance(60_001);
    expect((await world.reconciler.run()).drift).toEqual({ [Drift.LostEvent]: 1 });
    expect(world.ledger.peek('c1')).toMatchObject({ state: 'succeeded', executionId: run });
    expect(world.leases.poolView('default')).toEqual(expect.objectContaining({ inUse: 0, holders: {} }));
  });

  test('a report whose release kept failing is kept on the run: the next reconcile ends the run as it says, not its deadline', async () => {
    const world = makeDeps();
    const run = await startCallback(world, callbackJob('c1', { timeoutSeconds: 3600, heartbeatSeconds: 60 }));
    // Every write of the slot fails (the pool's counter contended past every try, say): the event's every delivery fails.
    const free = world.leases.free.bind(world.leases);
    world.leases.free = () => Promise.reject(new Error('TransactionCanceledException: [TransactionConflict, None]'));
    const report = { kind: 'callback' as const, executionId: run, outcome: 'succeeded' as const, name: 'c1' };
    for (let delivery = 0; delivery < 3; delivery++)
      await expect(world.completeRun.complete(report)).rejects.toThrow(/TransactionConflict/);
    world.leases.free = free;
    expect(world.ledger.peek('c1')!.state).toBe('running');

    world.clock.advance(1_000); // long before its heartbeat deadline
    expect((await world.reconciler.run()).drift).toEqual({ [Drift.LostEvent]: 1 });
    expect(world.ledger.peek('c1')).toMatchObject({ state: 'succeeded', executionId: run });
    expect(world.leases.poolView('default')).toEqual(expect.objectContaining({ inUse: 0, holders: {} }));
  });

  test('a kept report whose event is then delivered again and applied is not applied twice; a keep that fails leaves the first error', async () => {
    const world = makeDeps();
    const run = await startCallback(world, callbackJob('c1', { timeoutSeconds: 3600, heartbeatSeconds: 60 }));
    const free = world.leases.free.bind(world.leases);
    const keep = world.ledger.keepCompletion.bind(world.ledger);
    world.leases.free = () => Promise.reject(new Error('TransactionConflict on the counter'));
    world.ledger.keepCompletion = () => Promise.reject(new Error('the run key could not be written either'));
    const report = { kind: 'callback' as const, executionId: run, outcome: 'succeeded' as const, name: 'c1' };
    await expect(world.completeRun.complete(report)).rejects.toThrow('TransactionConflict on the counter');
    expect(await world.ledger.notedCompletion('callback', run)).toBeUndefined();
    world.ledger.keepCompletion = keep;
    await expect(world.completeRun.complete(report)).rejects.toThrow('TransactionConflict on the counter');
    expect(await world.ledger.notedCompletion('callback', run)).toEqual(report);

    world.leases.free = free;
    expect(await world.completeRun.complete(report)).toBe('released'); // the event's next delivery
    const ended = world.ledger.peek('c1')!;
    expect(ended).toMatchObject({ state: 'succeeded', executionId: run });
    world.clock.advance(1_000);
    expect((await world.reconciler.run()).drift).toEqual({});
    expect(world.ledger.peek('c1')).toEqual(ended);
  });

  test('no heartbeat at all: the heartbeat deadline counts from the start', async () => {
    const world = makeDeps();
    await startCallback(world, callbackJob('c1', { timeoutSeconds: 3600, heartbeatSeconds: 60 }));
    world.clock.advance(60_001);
    expect((await world.reconciler.run()).drift).toEqual({ [Drift.DeadlinePassed]: 1 });
    expect(world.ledger.peek('c1')!.lastError).toBe('timed out: no heartbeat for 60 s (none since its start)');
  });

  test("a heartbeat between the reconciler's read and its write wins: the run goes on", async () => {
    const world = makeDeps();
    const run = await startCallback(world, callbackJob('c1', { timeoutSeconds: 3600, heartbeatSeconds: 60 }));
    world.clock.advance(61_000);
    const get = world.ledger.get.bind(world.ledger);
    world.ledger.get = async (jobId) => {
      const read = await get(jobId);
      if (jobId === 'c1') expect(await world.ledger.heartbeat('c1', run, world.clock.now())).toBe(true);
      return read;
    };
    expect((await world.reconciler.run()).drift).toEqual({});
    world.ledger.get = get;
    expect(world.ledger.peek('c1')).toMatchObject({ state: 'running', heartbeatAt: world.clock.now() });
    expect(world.leases.poolView('default')!.inUse).toBe(1);
  });

  test('with stopOverdueRuns the run is stopped (a callback job: a cancel to its target) before its slot is freed', async () => {
    const world = makeDeps({ settings: { stopOverdueRuns: true } });
    const run = await startCallback(world, callbackJob('c1', { timeoutSeconds: 60 }));
    world.clock.advance(60_001);
    expect((await world.reconciler.run()).drift).toEqual({ [Drift.DeadlinePassed]: 1 });
    expect(world.starters.callback.stops).toEqual([run]);
    expect(world.ledger.peek('c1')!.state).toBe('failed');
  });

  test("a report that came first leaves nothing for the deadline: the job is finished, the reconciler doesn't touch it", async () => {
    const world = makeDeps();
    const run = await startCallback(world, callbackJob('c1', { timeoutSeconds: 60 }));
    expect(await world.completeRun.complete({ kind: 'callback', executionId: run, outcome: 'succeeded', name: 'c1' })).toBe('released');
    world.clock.advance(120_000);
    expect((await world.reconciler.run()).drift).toEqual({});
    expect(world.ledger.peek('c1')).toMatchObject({ state: 'succeeded' });
  });
});
