import { AcquireResult } from '../../../shared/app/acquireJob';
import { PoolAdmin } from '../../../shared/app/poolAdmin';
import { InvalidJobError } from '../../../shared/errors';
import { RunStatus } from '../../../shared/ports/jobStarter';
import { deliverSent, makeQueueDeps as makeDeps, type FakeWorld, parkGlueJob, startGlueJob } from '../../support/fakes';

const start = startGlueJob;
async function park(world: FakeWorld, id: string): Promise<void> {
  world.clock.advance(10);
  await parkGlueJob(world, id);
}

describe('PoolAdmin', () => {
  test('lowering the limit never touches the jobs holding slots', async () => {
    // Prepare: 3 running in a pool of 3
    const world = makeDeps({ settings: { pools: { default: 3 } } });
    const runs = [await start(world, 'a'), await start(world, 'b'), await start(world, 'c')];
    const before = world.leases.poolView('default')!;
    // Act
    const result = await world.poolAdmin.setLimit('default', 1);
    // Assess
    expect(result).toEqual({ admitted: 0, revoked: 0 });
    expect(world.leases.poolView('default')).toEqual({ ...before, limit: 1 });
    for (const run of runs) expect(world.starters.glue.runs.get(run)!.status).toBe(RunStatus.InProgress);
    expect(world.starters.glue.stops).toEqual([]);
    expect(['a', 'b', 'c'].map((id) => world.ledger.peek(id)!.state)).toEqual(['running', 'running', 'running']);
  });

  test('after lowering, newcomers wait and ending runs free slots until the pool is back under its limit', async () => {
    // Prepare
    const world = makeDeps({ settings: { pools: { default: 3 } } });
    const [a, b, c] = [await start(world, 'a'), await start(world, 'b'), await start(world, 'c')];
    await world.poolAdmin.setLimit('default', 1);
    await park(world, 'w1');
    // Act and assess: the first two completions shrink the pool, the third hands off
    await world.completeRun.complete(world.starters.glue.finish(a!, 'succeeded'));
    expect(world.leases.poolView('default')).toMatchObject({ inUse: 2 });
    await world.completeRun.complete(world.starters.glue.finish(b!, 'succeeded'));
    expect(world.leases.poolView('default')).toEqual(expect.objectContaining({ inUse: 1, holders: { c: expect.anything() } }));
    expect(world.queue.sent).toEqual([]);
    await world.completeRun.complete(world.starters.glue.finish(c!, 'succeeded'));
    expect(world.leases.poolView('default')).toEqual(expect.objectContaining({ inUse: 1, holders: { w1: expect.anything() } }));
  });

  test('raising the limit lets waiting jobs in at once, oldest first', async () => {
    // Prepare: limit 1, one running, three waiting
    const world = makeDeps({ settings: { pools: { default: 1 } } });
    await start(world, 'a');
    for (const id of ['w1', 'w2', 'w3']) await park(world, id);
    // Act
    const result = await world.poolAdmin.setLimit('default', 3);
    // Assess
    expect(result).toEqual({ admitted: 2, revoked: 0 });
    expect(Object.keys(world.leases.poolView('default')!.holders).sort()).toEqual(['a', 'w1', 'w2']);
    expect(world.queue.sent.map((m) => [JSON.parse(m.body).id, m.reserved])).toEqual([
      ['w1', true],
      ['w2', true],
    ]);
    expect(world.leases.allWaiters().map((w) => w.jobId)).toEqual(['w3']);
    expect((await deliverSent(world)).map((d) => d.result)).toEqual([AcquireResult.Started, AcquireResult.Started]);
    expect(world.starters.glue.inProgress()).toHaveLength(3);
  });

  test('a paused pool (limit 0) starts nothing; un-pausing starts the waiting jobs', async () => {
    const world = makeDeps();
    await world.poolAdmin.setLimit('default', 0);
    await park(world, 'w1');
    expect(world.starters.glue.startCalls).toEqual([]);
    expect(await world.poolAdmin.setLimit('default', 5)).toEqual({ admitted: 1, revoked: 0 });
    await deliverSent(world);
    expect(world.ledger.peek('w1')!.state).toBe('running');
  });

  test('setLimit creates a pool that does not exist yet', async () => {
    const world = makeDeps();
    await world.poolAdmin.setLimit('new-pool', 4);
    expect(world.leases.poolView('new-pool')).toEqual({ name: 'new-pool', limit: 4, inUse: 0, holders: {} });
  });

  test.each([-1, 1.5, 10001, Number.NaN])('an invalid limit (%p) is refused and changes nothing', async (limit) => {
    const world = makeDeps();
    await world.poolAdmin.setLimit('default', 2);
    await expect(world.poolAdmin.setLimit('default', limit)).rejects.toThrow(InvalidJobError);
    expect(world.leases.poolView('default')!.limit).toBe(2);
  });

  test('list shows each pool with its limit, use, holders and number waiting', async () => {
    const world = makeDeps({ settings: { pools: { default: 1 } } });
    await start(world, 'a');
    await park(world, 'w1');
    await park(world, 'w2');
    await world.poolAdmin.setLimit('idle', 3);
    // PoolAdmin needs only part of the deps
    const admin = new PoolAdmin({
      leases: world.leases,
      ledger: world.ledger,
      queue: world.queue,
      clock: world.clock,
      log: world.log,
      metrics: world.metrics,
    });
    expect(await admin.list()).toEqual([
      { name: 'default', limit: 1, inUse: 1, waiting: 2, holders: ['a'] },
      { name: 'idle', limit: 3, inUse: 0, waiting: 0, holders: [] },
    ]);
  });

  describe('a limit lowered while a reservation is in flight (issue 8, defect 8)', () => {
    /** limit 1: `a` runs, w1 waits; a's run ends, so the slot is handed to w1 and its wake-up is on its way. */
    async function reservedInFlight(world: FakeWorld): Promise<void> {
      const run = await start(world, 'a');
      await park(world, 'w1');
      await world.completeRun.complete(world.starters.glue.finish(run, 'succeeded'));
      expect(world.ledger.peek('w1')!.state).toBe('reserved');
    }

    test('setLimit takes the reservation back: the job waits again in its place, and its wake-up starts nothing', async () => {
      const world = makeDeps({ settings: { pools: { default: 1 } } });
      await reservedInFlight(world);
      // Act: pause the pool, then the wake-up arrives
      expect(await world.poolAdmin.setLimit('default', 0)).toEqual({ admitted: 0, revoked: 1 });
      const results = await deliverSent(world);
      // Assess
      expect(results.map((d) => d.result)).toEqual([AcquireResult.Duplicate]);
      expect(world.starters.glue.inProgress()).toEqual([]);
      expect(world.ledger.peek('w1')!.state).toBe('waiting');
      expect(world.leases.poolView('default')).toMatchObject({ inUse: 0, holders: {} });
      // and it runs once the pool is open again
      await world.poolAdmin.setLimit('default', 1);
      await deliverSent(world);
      expect(world.starters.glue.inProgress().map((r) => r.jobId)).toEqual(['w1']);
    });

    test('a claim finds the pool over its limit (the lowering was not seen by anyone revoking): the job waits, nothing starts', async () => {
      const world = makeDeps({ settings: { pools: { default: 1 } } });
      await reservedInFlight(world);
      // Act: the limit is lowered in the table only (as if setLimit's holder listing lagged behind the reservation)
      await world.leases.setLimit('default', 0);
      const results = await deliverSent(world);
      // Assess
      expect(results.map((d) => d.result)).toEqual([AcquireResult.Waiting]);
      expect(world.starters.glue.inProgress()).toEqual([]);
      expect(world.ledger.peek('w1')!.state).toBe('waiting');
      expect(await world.leases.countWaiters('default')).toBe(1);
      expect(world.leases.poolView('default')).toMatchObject({ inUse: 0, holders: {} });
    });
  });
});
