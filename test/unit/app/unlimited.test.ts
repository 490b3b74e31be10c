import { AcquireResult } from '../../../shared/app/acquireJob';
import { formatPoolDetails } from '../../../shared/cli/formatInspect';
import { poolDetails } from '../../../shared/inspect/pools';
import { Drift } from '../../../shared/app/reconcile';
import { UNLIMITED_COUNTER_LIMIT } from '../../../shared/domain/unlimited';
import { RunStatus } from '../../../shared/ports/jobStarter';
import { deliverSent, type FakeWorld, glueJob, makeDeps, messageOf } from '../../support/fakes';
import { sluiceServices } from '../../../shared/app/services';
import type { GlueJob } from '../../../shared/kinds/registry';

/**
 * Pools with no concurrency limit (POOLS: "unlimited"), through the real services on the in-memory ports: a job of one
 * takes no counter (no item every other job of the pool writes), never waits, and its release moves no counter; the
 * rest of its life (starts, retries, the DLQ, the reconciler) is any job's.
 */

const fanout = (id: string, extra: Partial<GlueJob> = {}): GlueJob => ({ ...glueJob(id, 'fanout'), ...extra });
const unlimited = (extra: object = {}) => makeDeps({ settings: { pools: { default: 1 }, unlimitedPools: ['fanout'], ...extra } });
const runOf = (world: FakeWorld, id: string) => world.starters.glue.runsOf(id)[0]!.executionId;

describe('an unlimited pool', () => {
  test('every job starts at once, none waits, and no counter is ever written for the pool', async () => {
    const world = unlimited();
    const results = [];
    for (let i = 0; i < 50; i++) results.push(await world.acquirer.process(messageOf(fanout(`f${i}`))));
    expect(results).toEqual(Array(50).fill(AcquireResult.Started));
    expect(world.starters.glue.inProgress()).toHaveLength(50);
    // No counter, no registry entry, no waiter: the pool's own partition is never written.
    expect(world.leases.peekPool('fanout')).toBeUndefined();
    expect(await world.leases.listPools()).toEqual([]);
    expect(world.leases.allWaiters()).toEqual([]);
    // Each slot is on its job's record, marked uncounted, and listed as a holder of the pool.
    expect(world.ledger.peek('f0')).toMatchObject({ state: 'running', lease: { pool: 'fanout', uncounted: true } });
    expect(world.leases.holdersOf('fanout')).toHaveLength(50);
  });

  test('a completion releases the record only, with no look at a waiting list; a duplicate changes nothing', async () => {
    const world = unlimited();
    await world.acquirer.process(messageOf(fanout('a')));
    const oldest = jest.spyOn(world.leases, 'oldestWaiters');
    const free = jest.spyOn(world.leases, 'free');
    const completion = world.starters.glue.finish(runOf(world, 'a'), 'succeeded');
    expect(await world.completeRun.complete(completion)).toBe('released');
    expect(await world.completeRun.complete(completion)).toBe('already-done');
    expect(world.ledger.peek('a')!.state).toBe('succeeded');
    expect(world.ledger.peek('a')!.lease).toBeUndefined();
    expect(oldest).not.toHaveBeenCalled();
    expect(free.mock.calls.map(([demand]) => demand)).toEqual([{ pool: 'fanout', keys: [], units: 1, uncounted: true }]);
    expect(world.leases.peekPool('fanout')).toBeUndefined();
    expect(world.queue.sent).toEqual([]);
  });

  test('a refused start backs off (record only) and its retry starts; a start failed for good is dead-lettered', async () => {
    const world = unlimited();
    world.starters.glue.failNextStarts(1);
    expect(await world.acquirer.process(messageOf(fanout('r')))).toBe(AcquireResult.RetryScheduled);
    expect(world.ledger.peek('r')).toMatchObject({ state: 'queued' });
    expect(world.ledger.peek('r')!.lease).toBeUndefined();
    expect((await deliverSent(world)).map((d) => d.result)).toEqual([AcquireResult.Started]);
    world.starters.glue.failNextStarts(1, 'permanent');
    expect(await world.acquirer.process(messageOf(fanout('p')))).toBe(AcquireResult.DeadLettered);
    expect(world.ledger.peek('p')).toMatchObject({ state: 'dead' });
    expect(world.ledger.peek('p')!.lease).toBeUndefined();
    expect(world.queue.deadLettersFor('p')).toHaveLength(1);
    expect(world.leases.peekPool('fanout')).toBeUndefined();
  });

  test('the reconciler checks its holders (none lists the pool): a lost completion ends the job', async () => {
    const world = unlimited();
    await world.acquirer.process(messageOf(fanout('lost')));
    world.starters.glue.setStatus(runOf(world, 'lost'), RunStatus.Succeeded);
    const report = await world.reconciler.run();
    expect(report).toMatchObject({ pools: 1, holdersChecked: 1, drift: { [Drift.LostEvent]: 1 } });
    expect(world.ledger.peek('lost')!.state).toBe('succeeded');
    // It creates the pool's counter (never full; no job of the pool wrote it) so that the CLI lists the pool.
    expect(world.leases.peekPool('fanout')).toEqual({ name: 'fanout', limit: UNLIMITED_COUNTER_LIMIT, inUse: 0, unlimited: true });
  });

  test('sluice top and pool list show it as unlimited, its jobs in use its holders (the counter counts none of them)', async () => {
    const world = unlimited();
    for (const id of ['a', 'b', 'c']) await world.acquirer.process(messageOf(fanout(id)));
    await world.reconciler.run();
    const [detail] = (await poolDetails({ leases: world.leases })).filter((p) => p.name === 'fanout');
    expect(detail).toMatchObject({ name: 'fanout', unlimited: true, inUse: 3, waiting: 0 });
    expect(detail!.held.map((h) => h.jobId).sort()).toEqual(['a', 'b', 'c']);
    const table = formatPoolDetails([detail!], world.clock.now()).split('\n');
    expect(table[1]).toMatch(/^fanout\s+unlimited\s+3\s+-\s+0$/);
  });

  test('with a start rate: its jobs book starts on the pool counter, which is never full', async () => {
    const world = unlimited({ rates: { fanout: 1 } });
    for (const id of ['a', 'b', 'c']) await world.acquirer.process(messageOf(fanout(id)));
    const counter = world.leases.peekPool('fanout')!;
    expect(counter).toMatchObject({ limit: UNLIMITED_COUNTER_LIMIT, inUse: 3 });
    // Each start booked one interval after the one before (a tat on the counter), not all at once.
    const booked = ['a', 'b', 'c'].map((id) => world.ledger.peek(id)!.startAt!);
    expect([booked[1]! - booked[0]!, booked[2]! - booked[1]!]).toEqual([counter.rate!.intervalMs, counter.rate!.intervalMs]);
    expect(counter.rate!.intervalMs).toBeGreaterThanOrEqual(1000);
  });

  test('a job naming a keyed limit takes it (and the pool counter, never full): the key holds it back', async () => {
    const world = unlimited({ keyLimits: { org: 1 } });
    expect(await world.acquirer.process(messageOf(fanout('k1', { limits: ['org:a'] })))).toBe(AcquireResult.Started);
    expect(await world.acquirer.process(messageOf(fanout('k2', { limits: ['org:a'] })))).toBe(AcquireResult.Waiting);
    expect(world.leases.peekPool('fanout')).toMatchObject({ limit: UNLIMITED_COUNTER_LIMIT, inUse: 1 });
    await world.completeRun.complete(world.starters.glue.finish(runOf(world, 'k1'), 'succeeded'));
    await deliverSent(world);
    expect(world.ledger.peek('k2')!.state).toBe('running');
    expect(world.leases.peekPool('key/org:a')).toMatchObject({ inUse: 1 });
  });

  test('its configuration changed while jobs hold slots: each gives back what its take counted', async () => {
    // A slot counted while the pool was limited, one not counted while it was unlimited.
    const world = makeDeps({ settings: { pools: { fanout: 5 } } });
    await world.acquirer.process(messageOf(fanout('counted')));
    Object.assign(world.settings, { pools: {}, unlimitedPools: ['fanout'] });
    await world.acquirer.process(messageOf(fanout('free')));
    expect(world.leases.peekPool('fanout')).toMatchObject({ inUse: 1 });
    // Limited again: the uncounted slot's end moves no counter, the counted one's gives its unit back.
    Object.assign(world.settings, { pools: { fanout: 5 }, unlimitedPools: [] });
    await world.completeRun.complete(world.starters.glue.finish(runOf(world, 'free'), 'succeeded'));
    expect(world.leases.peekPool('fanout')).toMatchObject({ inUse: 1 });
    await world.completeRun.complete(world.starters.glue.finish(runOf(world, 'counted'), 'succeeded'));
    expect(world.leases.peekPool('fanout')).toMatchObject({ inUse: 0 });
  });

  test('made limited again before any reconcile: a slot taken while it was unlimited is still checked, its lost completion repaired', async () => {
    const world = unlimited();
    await world.acquirer.process(messageOf(fanout('lost')));
    expect(world.ledger.peek('lost')).toMatchObject({ state: 'running', lease: { uncounted: true } });
    // Limited now (the configuration no longer names it unlimited); the run ends, its completion event lost.
    Object.assign(world.settings, { pools: { default: 1, fanout: 5 }, unlimitedPools: [] });
    world.starters.glue.setStatus(runOf(world, 'lost'), RunStatus.Succeeded);
    const report = await world.reconciler.run();
    expect(report).toMatchObject({ holdersChecked: 1, drift: { [Drift.LostEvent]: 1 } });
    expect(world.ledger.peek('lost')!.state).toBe('succeeded');
    expect(world.ledger.peek('lost')!.lease).toBeUndefined();
  });

  test('a pool unlimited before its slots marked it: the reconciler marks it, so it is still visited once limited again', async () => {
    const world = unlimited();
    await world.acquirer.process(messageOf(fanout('old')));
    // As a store that held the slot before pools were marked (an older version of Sluice took it).
    (world.leases as unknown as { uncountedMarks: Set<string> }).uncountedMarks.clear();
    expect(await world.leases.uncountedPools()).toEqual([]);
    await world.reconciler.run();
    expect(await world.leases.uncountedPools()).toEqual(['fanout']);
    Object.assign(world.settings, { pools: { default: 1, fanout: 5 }, unlimitedPools: [] });
    world.starters.glue.setStatus(runOf(world, 'old'), RunStatus.Succeeded);
    expect(await world.reconciler.run()).toMatchObject({ holdersChecked: 1, drift: { [Drift.LostEvent]: 1 } });
    expect(world.ledger.peek('old')!.state).toBe('succeeded');
  });

  test('switched between limited and unlimited: its counter (its keyed jobs take it) follows the configuration once each way', async () => {
    const world = makeDeps({ settings: { pools: { default: 1, fanout: 1 }, keyLimits: { org: 10 } } });
    const keyed = (id: string) => fanout(id, { limits: ['org:a'] });
    expect(await world.acquirer.process(messageOf(keyed('k1')))).toBe(AcquireResult.Started);
    expect(await world.acquirer.process(messageOf(keyed('k2')))).toBe(AcquireResult.Waiting);
    // Made unlimited: the next reconcile gives the counter the limit no pool reaches, and lets k2 in.
    Object.assign(world.settings, { pools: { default: 1 }, unlimitedPools: ['fanout'] });
    await world.reconciler.run();
    await deliverSent(world);
    expect(world.leases.peekPool('fanout')).toMatchObject({ limit: UNLIMITED_COUNTER_LIMIT, inUse: 2, unlimited: true });
    expect(world.ledger.peek('k2')!.state).toBe('running');
    // A limit the operator sets on it (for its keyed and rated jobs) is the table's: the reconciler leaves it.
    await world.poolAdmin.setLimit('fanout', 3);
    await world.reconciler.run();
    expect(world.leases.peekPool('fanout')).toMatchObject({ limit: 3, unlimited: true });
    // Limited again: the configured limit, as a counter created from configuration gets it.
    Object.assign(world.settings, { pools: { default: 1, fanout: 2 }, unlimitedPools: [] });
    await world.reconciler.run();
    expect(world.leases.peekPool('fanout')).toEqual({ name: 'fanout', limit: 2, inUse: 2 });
    expect(await world.acquirer.process(messageOf(keyed('k3')))).toBe(AcquireResult.Waiting);
  });
  test('limited again by a deploy: its counter follows at the next reconcile; a limit set on it before the deploy holds from the first job', async () => {
    // Rated while unlimited: its counter exists with the limit no pool reaches (the rate's tat lives on it).
    const before = unlimited({ rates: { fanout: 100 } });
    expect(await before.acquirer.process(messageOf(fanout('old')))).toBe(AcquireResult.Started);
    expect(before.leases.peekPool('fanout')).toMatchObject({ limit: UNLIMITED_COUNTER_LIMIT, unlimited: true });
    // The operator's step before the deploy (docs/protocol.md, Unlimited pools): the counter gets the new limit now.
    await before.poolAdmin.setLimit('fanout', 2);
    // The deploy: every function instance starts afresh with the new configuration (a limit of 2), over the same
    // table, and no reconcile has run yet.
    const settings = { ...before.settings, pools: { default: 1, fanout: 2 }, unlimitedPools: [] };
    const after = sluiceServices({ ...before.deps, settings });
    const results = [];
    for (const id of ['n1', 'n2', 'n3']) results.push(await after.acquirer.process(messageOf(fanout(id))));
    expect(results).toEqual([AcquireResult.Started, AcquireResult.Waiting, AcquireResult.Waiting]);
    // The next reconcile removes the mark: the counter is a limited pool's, at its configured limit.
    await after.reconciler.run();
    expect(before.leases.peekPool('fanout')).toEqual({ name: 'fanout', limit: 2, inUse: 2, rate: expect.anything() });
  });

  test('a counter an earlier version made unlimited (the limit no pool reaches, no mark) is one: it follows the configuration too', async () => {
    const world = makeDeps({ settings: { pools: { default: 1, fanout: 2 } } });
    await world.leases.createPool('fanout', UNLIMITED_COUNTER_LIMIT);
    // As an earlier version left it: at the limit, without the mark.
    delete (world.leases as unknown as { pools: Map<string, { unlimited?: boolean }> }).pools.get('fanout')!.unlimited;
    expect(await world.leases.getPool('fanout')).toMatchObject({ unlimited: true });
    await world.reconciler.run();
    expect(world.leases.peekPool('fanout')).toMatchObject({ limit: 2 });
  });
});
