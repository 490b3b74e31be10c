import fc from 'fast-check';
import { AcquireResult } from '../../../shared/app/acquireJob';
import { formatPoolDetails } from '../../../shared/cli/formatInspect';
import { poolDetails } from '../../../shared/inspect/pools';
import { Drift } from '../../../shared/app/reconcile';
import { UNLIMITED_COUNTER_LIMIT } from '../../../shared/domain/unlimited';
import { RunStatus } from '../../../shared/ports/jobStarter';
import { deliverSent, makeDeps, makeQueueDeps, messageOf } from '../../support/fakes';
import { sluiceServices } from '../../../shared/app/services';
import { fanout, limitAgain, runOf, settle } from '../../support/unlimitedPools';

/**
 * Pools with no concurrency limit (POOLS: "unlimited"), through the real services on the in-memory ports: a job of one
 * takes no counter (no item every other job of the pool writes), never waits, and its release moves no counter; the
 * rest of its life (starts, retries, the DLQ, the reconciler) is any job's.
 */

const unlimited = (extra: object = {}) => makeDeps({ settings: { pools: { default: 1 }, unlimitedPools: ['fanout'], ...extra } });

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
    const lists = ['oldestWaiters', 'readWaitingList', 'markRace'] as const;
    const looks = lists.map((method) => jest.spyOn(world.leases, method));
    const free = jest.spyOn(world.leases, 'free');
    const completion = world.starters.glue.finish(runOf(world, 'a'), 'succeeded');
    expect(await world.completeRun.complete(completion)).toBe('released');
    expect(await world.completeRun.complete(completion)).toBe('already-done');
    expect(world.ledger.peek('a')!.state).toBe('succeeded');
    expect(world.ledger.peek('a')!.lease).toBeUndefined();
    for (const look of looks) expect(look).not.toHaveBeenCalled();
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
    limitAgain(world, 5);
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
    limitAgain(world, 5);
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
    limitAgain(world, 2);
    await world.reconciler.run();
    expect(world.leases.peekPool('fanout')).toEqual({
      name: 'fanout',
      limit: 2,
      inUse: 2,
      adopting: true,
      adoptingSince: world.clock.now(),
    });
    // Adopting ends at a run begun once the adoption has settled.
    settle(world);
    await world.reconciler.run();
    expect(world.leases.peekPool('fanout')).toEqual({ name: 'fanout', limit: 2, inUse: 2 });
    expect(await world.acquirer.process(messageOf(keyed('k3')))).toBe(AcquireResult.Waiting);
  });
  test('limited again by a deploy with a start rate: no job starts on the unlimited counter; the next reconcile lets them in up to the limit', async () => {
    // Rated while unlimited: its counter exists with the limit no pool reaches (the rate's tat lives on it).
    const before = unlimited({ rates: { fanout: 100 } });
    expect(await before.acquirer.process(messageOf(fanout('old')))).toBe(AcquireResult.Started);
    expect(before.leases.peekPool('fanout')).toMatchObject({ limit: UNLIMITED_COUNTER_LIMIT, unlimited: true });
    // The deploy: every function instance starts afresh with the new configuration (a limit of 2), over the same
    // table, and no reconcile has run yet.
    const settings = { ...before.settings, pools: { default: 1, fanout: 2 }, unlimitedPools: [] };
    const after = sluiceServices({ ...before.deps, settings });
    const results = [];
    for (const id of ['n1', 'n2', 'n3']) results.push(await after.acquirer.process(messageOf(fanout(id))));
    // The first take found the counter still an unlimited pool's: it switched it (adopting, the configured limit).
    expect(results).toEqual([AcquireResult.Waiting, AcquireResult.Waiting, AcquireResult.Waiting]);
    expect(before.leases.peekPool('fanout')).toMatchObject({ limit: 2, inUse: 1, adopting: true });
    expect(before.leases.peekPool('fanout')!.unlimited).toBeUndefined();
    // The next reconcile once the adoption settled finds no uncounted slot (the rated jobs were counted): the counter
    // admits again, up to 2.
    settle(before);
    await after.reconciler.run();
    expect(before.leases.peekPool('fanout')).toEqual({ name: 'fanout', limit: 2, inUse: 2, rate: expect.anything() });
    await deliverSent(before);
    expect(before.starters.glue.inProgress()).toHaveLength(2);
  });

  test('limited again while 5 jobs run uncounted: no job starts until fewer than the new limit run, then up to it', async () => {
    const world = unlimited();
    for (let i = 0; i < 5; i++) expect(await world.acquirer.process(messageOf(fanout(`u${i}`)))).toBe(AcquireResult.Started);
    await world.reconciler.run(); // while unlimited: the pool's counter exists (the limit no pool reaches)
    // The deploy: a limit of 2. No reconcile yet: a job arriving now must not start (5 run already).
    limitAgain(world, 2);
    expect(await world.acquirer.process(messageOf(fanout('n0')))).toBe(AcquireResult.Waiting);
    expect(world.leases.peekPool('fanout')).toMatchObject({ limit: 2, inUse: 0, adopting: true });
    for (let i = 1; i < 4; i++) expect(await world.acquirer.process(messageOf(fanout(`n${i}`)))).toBe(AcquireResult.Waiting);
    // sluice top and pool list: the jobs it runs are the 5 it does not count yet; nothing is free.
    const [adopting] = (await poolDetails({ leases: world.leases, ledger: world.ledger })).filter((p) => p.name === 'fanout');
    expect(adopting).toMatchObject({ name: 'fanout', limit: 2, adopting: true, inUse: 5, waiting: 4 });
    expect(formatPoolDetails([adopting!], world.clock.now()).split('\n')[1]).toMatch(/^fanout\s+2\s+5\s+0\s+4$/);
    // The reconciler counts the 5 slots on the counter (over its limit), then, the adoption settled, lets it admit:
    // nothing fits.
    settle(world);
    const report = await world.reconciler.run();
    expect(report.drift).toMatchObject({ [Drift.Adopted]: 5 });
    expect(world.leases.peekPool('fanout')).toEqual({ name: 'fanout', limit: 2, inUse: 5 });
    expect(world.ledger.peek('u0')).toMatchObject({ state: 'running', lease: { pool: 'fanout' } });
    expect(world.ledger.peek('u0')!.lease!.uncounted).toBeUndefined();
    expect(world.leases.holdersOf('fanout')).toHaveLength(5);
    // Jobs end one by one: a waiting job starts only once fewer than 2 run, and never more than 2 run from then on.
    const running = () => world.starters.glue.inProgress().length;
    const seen: number[] = [];
    for (let i = 0; i < 5; i++) {
      await world.completeRun.complete(world.starters.glue.finish(runOf(world, `u${i}`), 'succeeded'));
      await deliverSent(world);
      await world.reconciler.run();
      await deliverSent(world);
      seen.push(running());
    }
    expect(seen).toEqual([4, 3, 2, 2, 2]);
    expect(['n0', 'n1', 'n2', 'n3'].map((id) => world.ledger.peek(id)!.state).sort()).toEqual(['running', 'running', 'waiting', 'waiting']);
    expect(world.leases.peekPool('fanout')).toEqual({ name: 'fanout', limit: 2, inUse: 2 });
  });

  test("sluice top and pool list: an adopting pool's jobs in use are counted in units (their weight), or said to be jobs when their records are not read", async () => {
    // Two jobs of weight 3 run uncounted; the pool is limited again (10): its counter counts none of their 6 units yet.
    const world = unlimited();
    for (const id of ['h0', 'h1']) expect(await world.acquirer.process(messageOf(fanout(id, { weight: 3 })))).toBe(AcquireResult.Started);
    await world.reconciler.run();
    limitAgain(world, 10);
    expect(await world.acquirer.process(messageOf(fanout('n0')))).toBe(AcquireResult.Waiting);
    const detail = async (deps: Parameters<typeof poolDetails>[0]) => (await poolDetails(deps)).find((p) => p.name === 'fanout')!;
    // With the records (pool list, sluice top's pool view): 6 units of 10, nothing free.
    const read = await detail({ leases: world.leases, ledger: world.ledger });
    expect(read).toMatchObject({ limit: 10, adopting: true, inUse: 6 });
    expect(read.uncountedJobs).toBeUndefined();
    expect(formatPoolDetails([read], world.clock.now()).split('\n')[1]).toMatch(/^fanout\s+10\s+6\s+0\s+1$/);
    // Without them: the counter's units and the jobs it does not count, apart (never jobs added to units).
    const unread = await detail({ leases: world.leases });
    expect(unread).toMatchObject({ limit: 10, adopting: true, inUse: 0, uncountedJobs: 2 });
    expect(formatPoolDetails([unread], world.clock.now()).split('\n')[1]).toMatch(/^fanout\s+10\s+0 \+ 2 jobs\s+0\s+1$/);
  });

  test('limited again before any reconcile ever created its counter: the first take creates it adopting, and waits', async () => {
    const world = unlimited();
    for (let i = 0; i < 3; i++) expect(await world.acquirer.process(messageOf(fanout(`u${i}`)))).toBe(AcquireResult.Started);
    expect(world.leases.peekPool('fanout')).toBeUndefined();
    limitAgain(world, 2);
    expect(await world.acquirer.process(messageOf(fanout('n0')))).toBe(AcquireResult.Waiting);
    expect(world.leases.peekPool('fanout')).toEqual({
      name: 'fanout',
      limit: 2,
      inUse: 0,
      adopting: true,
      adoptingSince: world.clock.now(),
    });
    expect(world.starters.glue.inProgress()).toHaveLength(3);
    settle(world);
    await world.reconciler.run();
    expect(world.leases.peekPool('fanout')).toEqual({ name: 'fanout', limit: 2, inUse: 3 });
    expect(world.ledger.peek('n0')!.state).toBe('waiting');
  });

  test('a reservation made on the unlimited counter is taken back, not started, once the pool is limited again', async () => {
    // A keyed job waits on its key (the pool counter, an unlimited pool's, has room); it is handed a slot by a release.
    const world = makeQueueDeps({ settings: { pools: { default: 1 }, unlimitedPools: ['fanout'], keyLimits: { org: 1 } } });
    for (let i = 0; i < 3; i++) await world.acquirer.process(messageOf(fanout(`u${i}`)));
    await world.acquirer.process(messageOf(fanout('k1', { limits: ['org:a'] })));
    expect(await world.acquirer.process(messageOf(fanout('k2', { limits: ['org:a'] })))).toBe(AcquireResult.Waiting);
    await world.completeRun.complete(world.starters.glue.finish(runOf(world, 'k1'), 'succeeded'));
    expect(world.ledger.peek('k2')!.state).toBe('reserved');
    // The deploy (a limit of 2; 3 jobs run uncounted) comes before its wake-up: the claim is refused and the job waits.
    limitAgain(world, 2);
    await deliverSent(world);
    expect(world.ledger.peek('k2')!.state).toBe('waiting');
    expect(world.starters.glue.inProgress()).toHaveLength(3);
    expect(world.leases.peekPool('fanout')).toMatchObject({ limit: 2, adopting: true });
  });

  test("limited again, no reconcile yet: a release hands no slot to a waiting job on the counter still an unlimited pool's", async () => {
    // Keyed jobs take the pool's counter (an unlimited pool's) and their key; k2 waits on the key. Three run uncounted.
    const world = unlimited({ keyLimits: { org: 1 } });
    for (let i = 0; i < 3; i++) await world.acquirer.process(messageOf(fanout(`u${i}`)));
    expect(await world.acquirer.process(messageOf(fanout('k1', { limits: ['org:a'] })))).toBe(AcquireResult.Started);
    expect(await world.acquirer.process(messageOf(fanout('k2', { limits: ['org:a'] })))).toBe(AcquireResult.Waiting);
    // The deploy: a limit of 2 (4 run). k1 ends: its release must not start k2 on the old counter.
    limitAgain(world, 2);
    await world.completeRun.complete(world.starters.glue.finish(runOf(world, 'k1'), 'succeeded'));
    await deliverSent(world);
    expect(world.ledger.peek('k2')!.state).toBe('waiting');
    expect(world.starters.glue.inProgress()).toHaveLength(3);
    // The reconciler switches and counts the three; at a run once the adoption settled it admits again: still no room
    // (3 of 2) until two of them end.
    await world.reconciler.run();
    settle(world);
    await world.reconciler.run();
    await deliverSent(world);
    expect(world.leases.peekPool('fanout')).toEqual({ name: 'fanout', limit: 2, inUse: 3 });
    expect(world.ledger.peek('k2')!.state).toBe('waiting');
    for (const id of ['u0', 'u1']) await world.completeRun.complete(world.starters.glue.finish(runOf(world, id), 'succeeded'));
    await deliverSent(world);
    expect(world.ledger.peek('k2')!.state).toBe('running');
    expect(world.starters.glue.inProgress()).toHaveLength(2);
  });

  test('a job ending as the reconciler counts its slot: its release decided on the uncounted read fails, reads again, and gives a counted slot back', async () => {
    const world = unlimited();
    await world.acquirer.process(messageOf(fanout('u0')));
    await world.reconciler.run();
    limitAgain(world, 1);
    expect(await world.acquirer.process(messageOf(fanout('n0')))).toBe(AcquireResult.Waiting);
    // The releaser read u0 uncounted; the reconciler counts the slot before the releaser's write lands.
    const free = world.leases.free.bind(world.leases);
    const freed = jest.spyOn(world.leases, 'free').mockImplementationOnce(async (demand, move, now) => {
      expect(await world.leases.adopt('fanout', 'u0', 1)).toBe('adopted');
      return free(demand, move, now);
    });
    expect(await world.completeRun.complete(world.starters.glue.finish(runOf(world, 'u0'), 'succeeded'))).toBe('released');
    expect(freed.mock.calls.map(([demand]) => demand.uncounted === true)).toEqual([true, false]);
    expect(world.ledger.peek('u0')).toMatchObject({ state: 'succeeded' });
    expect(world.leases.peekPool('fanout')).toEqual({
      name: 'fanout',
      limit: 1,
      inUse: 0,
      adopting: true,
      adoptingSince: world.clock.now(),
    });
    // The reconciler, once the adoption settled, finds nothing left to count: n0 starts.
    settle(world);
    await world.reconciler.run();
    await deliverSent(world);
    expect(world.ledger.peek('n0')!.state).toBe('running');
    expect(world.leases.peekPool('fanout')).toEqual({ name: 'fanout', limit: 1, inUse: 1 });
  });

  test('adopting ends only at a run that counted every uncounted slot it saw: one it failed to count keeps the pool admitting nothing', async () => {
    const world = unlimited();
    for (let i = 0; i < 3; i++) await world.acquirer.process(messageOf(fanout(`u${i}`)));
    await world.reconciler.run();
    limitAgain(world, 5);
    expect(await world.acquirer.process(messageOf(fanout('n0')))).toBe(AcquireResult.Waiting);
    // The first run (the adoption settled) fails to count one slot (throttled, say): the counter stays adopting, and n0 waits.
    const since = world.clock.now();
    settle(world);
    jest.spyOn(world.leases, 'adopt').mockRejectedValueOnce(new Error('ThrottlingException'));
    expect((await world.reconciler.run()).drift).toMatchObject({ [Drift.Adopted]: 2 });
    expect(world.leases.peekPool('fanout')).toEqual({ name: 'fanout', limit: 5, inUse: 2, adopting: true, adoptingSince: since });
    expect(world.ledger.peek('n0')!.state).toBe('waiting');
    // The next counts it, finds none left, and lets n0 in (4 of 5 units in use then).
    expect((await world.reconciler.run()).drift).toMatchObject({ [Drift.Adopted]: 1, [Drift.IdleSlot]: 1 });
    await deliverSent(world);
    expect(world.ledger.peek('n0')!.state).toBe('running');
    expect(world.leases.peekPool('fanout')).toEqual({ name: 'fanout', limit: 5, inUse: 4 });
  });

  test('a counted job of an adopting pool ending: its release tries no reservation for the waiting jobs (nothing is free while adopting)', async () => {
    const world = unlimited();
    for (let i = 0; i < 3; i++) await world.acquirer.process(messageOf(fanout(`u${i}`)));
    await world.reconciler.run();
    limitAgain(world, 5);
    for (const id of ['n0', 'n1']) expect(await world.acquirer.process(messageOf(fanout(id)))).toBe(AcquireResult.Waiting);
    // A run within the settle time counts the three slots (3 of 5): the pool is still adopting.
    await world.reconciler.run();
    expect(world.leases.peekPool('fanout')).toMatchObject({ limit: 5, inUse: 3, adopting: true });
    // u0 ends, its slot a counted one now: no hand-off and no fill reservation is tried (each would be refused).
    const reserve = jest.spyOn(world.leases, 'reserve');
    await world.completeRun.complete(world.starters.glue.finish(runOf(world, 'u0'), 'succeeded'));
    await deliverSent(world);
    expect(reserve).not.toHaveBeenCalled();
    expect(['n0', 'n1'].map((id) => world.ledger.peek(id)!.state)).toEqual(['waiting', 'waiting']);
    expect(world.leases.peekPool('fanout')).toMatchObject({ inUse: 2, adopting: true });
  });

  test('a slot the holders index did not show yet is counted at a later run; until enough jobs end the pool admits nothing more', async () => {
    const world = unlimited();
    for (let i = 0; i < 3; i++) await world.acquirer.process(messageOf(fanout(`u${i}`)));
    await world.reconciler.run();
    limitAgain(world, 2);
    for (const id of ['n0', 'n1']) expect(await world.acquirer.process(messageOf(fanout(id)))).toBe(AcquireResult.Waiting);
    // The index lags: u2's entry is not there for the first run (GSI reads are eventually consistent).
    const holders = world.leases.holders.bind(world.leases);
    const lagging = jest.spyOn(world.leases, 'holders').mockImplementation(async (pool, options) => {
      const page = await holders(pool, options);
      return { ...page, holders: page.holders.filter((holder) => holder.jobId !== 'u2') };
    });
    settle(world);
    await world.reconciler.run();
    // The bound: the two it saw are counted and the counter admits again with room for none (2 of 2).
    expect(world.leases.peekPool('fanout')).toEqual({ name: 'fanout', limit: 2, inUse: 2 });
    expect(world.ledger.peek('u2')!.lease).toMatchObject({ uncounted: true });
    lagging.mockRestore();
    expect((await world.reconciler.run()).drift).toMatchObject({ [Drift.Adopted]: 1 });
    expect(world.leases.peekPool('fanout')).toEqual({ name: 'fanout', limit: 2, inUse: 3 });
    // Over its limit: one ending job frees no room for a waiting one; the second does.
    await world.completeRun.complete(world.starters.glue.finish(runOf(world, 'u0'), 'succeeded'));
    await deliverSent(world);
    expect(world.starters.glue.inProgress()).toHaveLength(2);
    await world.completeRun.complete(world.starters.glue.finish(runOf(world, 'u1'), 'succeeded'));
    await deliverSent(world);
    expect(
      world.starters.glue
        .inProgress()
        .map((run) => run.jobId)
        .sort(),
    ).toEqual(['n0', 'u2']);
  });

  test('property: once the pool is limited again, a job started after the switch runs only while at most the limit run', async () => {
    type Step = { do: 'arrive' } | { do: 'end'; pick: number } | { do: 'reconcile' } | { do: 'settle' };
    const step: fc.Arbitrary<Step> = fc.oneof(
      fc.constant({ do: 'arrive' as const }),
      fc.record({ do: fc.constant('end' as const), pick: fc.nat() }),
      fc.constant({ do: 'reconcile' as const }),
      fc.constant({ do: 'settle' as const }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 6 }),
        fc.integer({ min: 0, max: 3 }),
        fc.boolean(),
        fc.array(step, { maxLength: 25 }),
        async (before, limit, reconciledBefore, steps) => {
          const world = unlimited();
          for (let i = 0; i < before; i++) await world.acquirer.process(messageOf(fanout(`u${i}`)));
          if (reconciledBefore) await world.reconciler.run();
          Object.assign(world.settings, { pools: { default: 1, fanout: limit }, unlimitedPools: [] });
          let arrivals = 0;
          const check = () => {
            const running = world.starters.glue.inProgress();
            const startedAfter = running.filter((run) => run.jobId.startsWith('n')).length;
            if (startedAfter > 0) expect({ running: running.length, limit }).toEqual({ running: Math.min(running.length, limit), limit });
          };
          for (const next of steps) {
            if (next.do === 'arrive') await world.acquirer.process(messageOf(fanout(`n${arrivals++}`)));
            else if (next.do === 'reconcile') await world.reconciler.run();
            else if (next.do === 'settle') settle(world);
            else {
              const running = world.starters.glue.inProgress();
              if (running.length > 0)
                await world.completeRun.complete(world.starters.glue.finish(running[next.pick % running.length]!.executionId, 'succeeded'));
            }
            await deliverSent(world);
            check();
          }
        },
      ),
      { numRuns: 150 },
    );
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
