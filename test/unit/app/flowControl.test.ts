import { AcquireResult } from '../../../shared/app/acquireJob';
import { keyGate } from '../../../shared/domain/limits';
import { deliverSent, type FakeWorld, glueJob, makeDeps, messageOf } from '../../support/fakes';
import type { GlueJob } from '../../../shared/kinds/registry';

/**
 * Flow control beyond one number (issue 14): keyed limits beside the pool, weights, priorities and fair turns, through
 * the real services on the in-memory ports. Interleavings of all of it are explored in test/unit/explore.
 */

const org = (name: string) => keyGate(`org:${name}`);

function job(id: string, extra: Partial<GlueJob> = {}): GlueJob {
  return { ...glueJob(id), ...extra };
}

async function deliver(world: FakeWorld, spec: GlueJob): Promise<AcquireResult> {
  return world.acquirer.process(messageOf(spec));
}

/** Ends the oldest run in progress and delivers whatever that sends (wake-ups); returns the id of the job that ended. */
async function endOldest(world: FakeWorld): Promise<string> {
  const run = world.starters.glue.inProgress()[0]!;
  world.clock.advance(1000);
  await world.completeRun.complete(world.starters.glue.finish(run.executionId, 'succeeded'));
  await deliverSent(world);
  return run.jobId;
}

/**
 * Runs `work` with every wait for a booked start held until nothing else can move (the fake clock would otherwise jump
 * to the booked time at once, before the other jobs of the burst arrive), then lets the sleepers wake, in time order.
 */
async function whileAsleep<T>(world: FakeWorld, work: () => Promise<T>): Promise<T> {
  const sleepers: Array<{ at: number; wake: () => void }> = [];
  const sleep = jest.spyOn(world.clock, 'sleepUntil').mockImplementation((at) => new Promise<void>((wake) => sleepers.push({ at, wake })));
  const done = work();
  for (let spins = 0; spins < 10_000; spins++) {
    await new Promise((resolve) => setImmediate(resolve));
    const settled = await Promise.race([done.then(() => true), new Promise<false>((resolve) => setImmediate(() => resolve(false)))]);
    if (settled) break;
    if (sleepers.length === 0) continue;
    sleepers.sort((a, b) => a.at - b.at);
    const next = sleepers.shift()!;
    world.clock.advanceTo(next.at);
    next.wake();
  }
  sleep.mockRestore();
  return done;
}

const started = (world: FakeWorld) => [...world.starters.glue.runs.values()].map((run) => run.jobId);

describe('keyed limits', () => {
  test('a job starts only when its pool and every keyed limit have room; the key holds it back, not the pool', async () => {
    // Prepare: pool of 8, at most 2 per org (created from the prefix default on first use)
    const world = makeDeps({ settings: { pools: { default: 8 }, keyLimits: { org: 2 } } });
    // Act: three jobs of acme, one of globex
    const results = [];
    for (const id of ['a1', 'a2', 'a3']) results.push(await deliver(world, job(id, { limits: ['org:acme'] })));
    results.push(await deliver(world, job('g1', { limits: ['org:globex'] })));
    // Assess: a3 waits on acme's list, while the pool had room (g1 started after it)
    expect(results).toEqual([AcquireResult.Started, AcquireResult.Started, AcquireResult.Waiting, AcquireResult.Started]);
    expect(world.leases.peekPool('default')).toMatchObject({ limit: 8, inUse: 3 });
    expect(world.leases.peekPool(org('acme'))).toMatchObject({ limit: 2, inUse: 2 });
    expect(world.leases.allWaiters().map((w) => [w.jobId, w.gate])).toEqual([['a3', org('acme')]]);
    // Act: globex's job ends: nothing for acme; then an acme job ends: a3 gets its place
    await world.completeRun.complete(world.starters.glue.finish(world.starters.glue.runsOf('g1')[0]!.executionId, 'succeeded'));
    expect(world.queue.sent).toEqual([]);
    await world.completeRun.complete(world.starters.glue.finish(world.starters.glue.runsOf('a1')[0]!.executionId, 'succeeded'));
    await deliverSent(world);
    expect(world.ledger.peek('a3')!.state).toBe('running');
    expect(world.leases.peekPool(org('acme'))).toMatchObject({ inUse: 2 });
  });

  test('a limit per key plus a total: ten keys of 5 never run more than the pool total of 8', async () => {
    const world = makeDeps({ settings: { pools: { default: 8 }, keyLimits: { org: 5 } } });
    for (let k = 0; k < 10; k++) for (let i = 0; i < 5; i++) await deliver(world, job(`k${k}-${i}`, { limits: [`org:${k}`] }));
    expect(world.starters.glue.inProgress()).toHaveLength(8);
    // Every run ends in turn; never more than 8 at once, never more than 5 of one key.
    for (let ended = 0; ended < 50; ended++) {
      const running = world.starters.glue.inProgress();
      expect(running.length).toBeLessThanOrEqual(8);
      const perKey = new Map<string, number>();
      for (const run of running) perKey.set(run.jobId.split('-')[0]!, (perKey.get(run.jobId.split('-')[0]!) ?? 0) + 1);
      expect(Math.max(...perKey.values())).toBeLessThanOrEqual(5);
      if (running.length === 0) break;
      await endOldest(world);
    }
    expect(started(world)).toHaveLength(50);
    expect(world.leases.allWaiters()).toEqual([]);
  });

  test('a job held back by a key while it waited for the pool moves to the key\'s list, and starts when the key frees', async () => {
    // Prepare: pool of 1; key of 1. x (acme) runs; y (acme) waits for the pool (the take found the pool full first).
    const world = makeDeps({ settings: { pools: { default: 1 }, keyLimits: { org: 1 } } });
    await deliver(world, job('x', { limits: ['org:acme'] }));
    await deliver(world, job('y', { limits: ['org:acme'] }));
    expect(world.leases.allWaiters().map((w) => [w.jobId, w.gate])).toEqual([['y', 'default']]);
    // Act: the pool is raised; y is tried and found held back by acme, so it moves to acme's list
    await world.poolAdmin.setLimit('default', 5);
    expect(world.leases.allWaiters().map((w) => [w.jobId, w.gate])).toEqual([['y', org('acme')]]);
    // x ends: acme frees, y starts
    await endOldest(world);
    expect(world.ledger.peek('y')!.state).toBe('running');
    expect(world.leases.allWaiters()).toEqual([]);
  });

  test('a key with no limit set and no default for its prefix is dead-lettered with a reason that says how to fix it', async () => {
    const world = makeDeps({ settings: { pools: { default: 8 }, keyLimits: {} } });
    expect(await deliver(world, job('j', { limits: ['tenant:acme'] }))).toBe(AcquireResult.DeadLettered);
    expect(world.queue.deadLettered[0]!.reason).toMatch(/unknown limit 'tenant:acme'.*sluice limit set tenant:acme N.*prefix 'tenant'/);
    expect(world.leases.peekPool('default')).toMatchObject({ inUse: 0 });
    // Set by hand, the same key works.
    await world.poolAdmin.setLimit(keyGate('tenant:acme'), 1);
    expect(await deliver(world, job('k', { limits: ['tenant:acme'] }))).toBe(AcquireResult.Started);
  });
});

describe('weights', () => {
  test('a job takes its weight in units from every limit; units in use never pass the budget', async () => {
    // Prepare: a budget of 20 DPUs
    const world = makeDeps({ settings: { pools: { dpu: 20 } } });
    const weights = [10, 2, 8, 5, 10, 2, 2];
    for (const [i, weight] of weights.entries()) await deliver(world, job(`w${i}`, { pool: 'dpu', weight }));
    // Assess: 10 + 2 + 8 = 20 run; 5 waits (and 10, 2, 2 behind it: strict order, no overtaking)
    expect(world.leases.peekPool('dpu')).toMatchObject({ inUse: 20 });
    expect(started(world)).toEqual(['w0', 'w1', 'w2']);
    // w1 (2) ends: 18 in use, w3 (5) still does not fit and keeps its place; w0 (10) ends: w3 and w4 fit (5 + 10)
    await world.completeRun.complete(world.starters.glue.finish(world.starters.glue.runsOf('w1')[0]!.executionId, 'succeeded'));
    await deliverSent(world);
    expect(started(world)).toEqual(['w0', 'w1', 'w2']);
    await world.completeRun.complete(world.starters.glue.finish(world.starters.glue.runsOf('w0')[0]!.executionId, 'succeeded'));
    await deliverSent(world);
    expect(started(world).sort()).toEqual(['w0', 'w1', 'w2', 'w3']);
    expect(world.leases.peekPool('dpu')!.inUse).toBeLessThanOrEqual(20);
    while (world.starters.glue.inProgress().length > 0) {
      await endOldest(world);
      const inUse = world.starters.glue.inProgress().reduce((sum, run) => sum + weights[Number(run.jobId.slice(1))]!, 0);
      expect(inUse).toBeLessThanOrEqual(20);
    }
    expect(started(world)).toHaveLength(weights.length);
  });

  test('a weight more than the limit can ever hold is dead-lettered, not parked forever', async () => {
    const world = makeDeps({ settings: { pools: { dpu: 8 } } });
    expect(await deliver(world, job('big', { pool: 'dpu', weight: 9 }))).toBe(AcquireResult.DeadLettered);
    expect(world.queue.deadLettered[0]!.reason).toMatch(/weight 9 is more than the 8 units of pool 'dpu'/);
  });
});

describe('priorities and fair turns', () => {
  test('a higher priority starts first; equal priorities in arrival order', async () => {
    const world = makeDeps({ settings: { pools: { default: 1 } } });
    await deliver(world, job('running'));
    for (const [id, priority] of [['low', 0], ['high', 5], ['low2', 0], ['mid', 1], ['high2', 5]] as const) {
      world.clock.advance(10);
      await deliver(world, job(id, { priority }));
    }
    const order = [];
    for (let i = 0; i < 5; i++) {
      await endOldest(world);
      order.push(world.starters.glue.inProgress()[0]!.jobId);
    }
    expect(order).toEqual(['high', 'high2', 'mid', 'low', 'low2']);
  });

  test('two tenants: the one sending 10 jobs after the other sent 100 takes turns with it, not after it', async () => {
    // Prepare: limit 2; big sends 100, then small sends 10
    const world = makeDeps({ settings: { pools: { default: 2 } } });
    for (let i = 0; i < 100; i++) await deliver(world, job(`big-${i}`, { fairnessKey: 'big' }));
    for (let i = 0; i < 10; i++) await deliver(world, job(`small-${i}`, { fairnessKey: 'small' }));
    // Act: runs end one by one
    let handOffs = 0;
    while (started(world).filter((id) => id.startsWith('small')).length < 10) {
      await endOldest(world);
      handOffs++;
    }
    // Assess: within ceil(10 / its share of 1/2) = 20 hand-offs
    expect(handOffs).toBeLessThanOrEqual(20);
    // FIFO within a tenant
    const smallOrder = started(world).filter((id) => id.startsWith('small'));
    expect(smallOrder).toEqual([...Array(10).keys()].map((i) => `small-${i}`));
  });
});

describe('start rates', () => {
  test('at most 2 starts a second with slots to spare: starts 520 ms apart (500 and the margin), the rest wait for one tick at a time, no polling', async () => {
    // Prepare: 50 free slots, 2 starts a second (set when the pool is created)
    const world = makeDeps({ settings: { pools: { api: 50 }, rates: { api: 2 } } });
    // Act: 8 jobs arrive at once; the ones admitted wait for their booked start while the others arrive
    const results = await whileAsleep(world, () => Promise.all(Array.from({ length: 8 }, (_, i) => deliver(world, job(`r${i}`, { pool: 'api' })))));
    // Assess: four started (booked at 0, 520, 1,040 and 1,560 ms: the horizon is 2 s), the others wait for a tick
    expect(results.filter((r) => r === AcquireResult.Started)).toHaveLength(4);
    expect(results.filter((r) => r === AcquireResult.Waiting)).toHaveLength(4);
    const ticks = world.queue.sent.filter((m) => m.body.includes('sluiceTick'));
    expect(ticks).toHaveLength(1);
    // The ticks and wake-ups let the others in as starts can be booked.
    const delivered = await deliverSent(world);
    expect(started(world).sort()).toEqual(Array.from({ length: 8 }, (_, i) => `r${i}`).sort());
    const starts = [...world.starters.glue.runs.values()].map((run) => run.startedAt).sort((a, b) => a - b);
    for (let i = 1; i < starts.length; i++) expect(starts[i]! - starts[i - 1]!).toBeGreaterThanOrEqual(520);
    // Exactly back to back: 8 starts in 7 intervals.
    expect(starts[starts.length - 1]! - starts[0]!).toBe(7 * 520);
    // Waiting cost no polling: one wake-up per waiting job and a tick per second or so, nothing else.
    const tickDeliveries = delivered.filter((d) => d.result === AcquireResult.Tick).length;
    expect(delivered.length - tickDeliveries).toBe(4);
    expect(tickDeliveries).toBeLessThanOrEqual(4);
  });

  test('a rate on a keyed limit holds back only the jobs that name it', async () => {
    const world = makeDeps({ settings: { pools: { default: 10 }, keyLimits: { api: 10 }, rates: { 'key/api:*': 1 } } });
    const rated = await whileAsleep(world, () =>
      Promise.all([0, 1, 2, 3].map((i) => deliver(world, job(`k${i}`, { limits: ['api:textract'] })))),
    );
    const free = await Promise.all([0, 1, 2].map((i) => deliver(world, job(`f${i}`))));
    expect(free).toEqual([AcquireResult.Started, AcquireResult.Started, AcquireResult.Started]);
    expect(rated.filter((r) => r === AcquireResult.Started)).toHaveLength(2); // at 0 and 1,040 ms (2,080 > the horizon)
    await deliverSent(world);
    const starts = ['k0', 'k1', 'k2', 'k3'].map((id) => world.starters.glue.runsOf(id)[0]!.startedAt).sort((a, b) => a - b);
    for (let i = 1; i < starts.length; i++) expect(starts[i]! - starts[i - 1]!).toBeGreaterThanOrEqual(1000);
  });
});

describe('rejected jobs and duplicate copies', () => {
  test('a copy that finds its job rejected by another copy that died before its DLQ send sends the DLQ copy itself', async () => {
    // Prepare: a job heavier than its pool can ever hold, delivered twice. Copy B reads the job and its take fails; then
    // copy A runs whole: its reject applies, its answer is lost (it fails before the DLQ send; B's delivery then deletes
    // the message). Found by the explorer (seed 32, flow control).
    const world = makeDeps({ settings: { pools: { dpu: 4 } } });
    const spec = job('heavy', { pool: 'dpu', weight: 5 });
    const move = world.ledger.move.bind(world.ledger);
    jest.spyOn(world.ledger, 'move').mockImplementationOnce(async (m, now) => {
      await move(m, now);
      throw new Error('LostAnswer: the write applied, its answer was lost');
    });
    const take = world.leases.take.bind(world.leases);
    let resumeB!: () => void;
    const bMayGoOn = new Promise<void>((resolve) => (resumeB = resolve));
    jest.spyOn(world.leases, 'take').mockImplementationOnce(async (demand, m, now) => {
      const result = await take(demand, m, now);
      await bMayGoOn;
      return result;
    });
    const copyB = deliver(world, spec);
    await expect(deliver(world, spec)).rejects.toThrow(/LostAnswer/);
    expect(world.ledger.peek('heavy')).toMatchObject({ state: 'dead' });
    expect(world.queue.deadLettered).toEqual([]);
    // Act: copy B goes on from its failed take of the job as it read it (queued)
    resumeB();
    // Assess: B's reject finds the job moved, reads it again, and sends the DLQ copy the dead copy could not
    expect(await copyB).toBe(AcquireResult.DeadLettered);
    expect(world.queue.deadLettered.map((d) => d.reason)).toEqual([expect.stringMatching(/weight 5 is more than the 4 units/)]);
    expect(world.ledger.peek('heavy')!.deadLetteredAt).toBeDefined();
  });
});
