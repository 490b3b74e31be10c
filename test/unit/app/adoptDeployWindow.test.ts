import { AcquireResult } from '../../../shared/app/acquireJob';
import { sluiceServices } from '../../../shared/app/services';
import { deliverSent, makeDeps, messageOf } from '../../support/fakes';
import { fanout, runOf, settle } from '../../support/unlimitedPools';

/**
 * The deploy window of a pool limited again (docs/protocol.md, Unlimited pools): invocations still on the configuration
 * before the deploy (an acquirer running to its timeout; a function CloudFormation updates after the reconciler) keep
 * taking uncounted slots after the switch. Adopting ends only at a reconciler run whose reads began once the adoption
 * settled (adoptSettleSeconds after the switch), so none of those slots is left out of the count when the pool admits.
 */

const OLD = { pools: { default: 1 }, unlimitedPools: ['fanout'] };
const NEW = { pools: { default: 1, fanout: 3 }, unlimitedPools: [] };

test('takes by invocations on the old configuration after a shard read within the settle time: the pool never runs more than its limit once a new job starts', async () => {
  const world = makeDeps({ settings: { ...OLD } });
  expect(await world.acquirer.process(messageOf(fanout('u0')))).toBe(AcquireResult.Started);
  await world.reconciler.run(); // while unlimited: the pool's counter exists (the limit no pool reaches)
  // An acquirer instance warm on the old configuration (it took u0's slot) lives on through the deploy.
  const old = sluiceServices({ ...world.deps, settings: { ...world.settings, ...OLD } });
  expect(await old.acquirer.process(messageOf(fanout('u1')))).toBe(AcquireResult.Started);
  // The deploy: a limit of 3. The first job on the new configuration switches the counter to adopting, and waits.
  Object.assign(world.settings, NEW);
  expect(await world.acquirer.process(messageOf(fanout('n0')))).toBe(AcquireResult.Waiting);
  const since = world.clock.now();
  expect(world.leases.peekPool('fanout')).toEqual({ name: 'fanout', limit: 3, inUse: 0, adopting: true, adoptingSince: since });
  const newStarted = () => world.starters.glue.inProgress().filter((run) => run.jobId.startsWith('n')).length;
  const running = () => world.starters.glue.inProgress().length;
  // Whenever a job of the new configuration runs, at most the limit run.
  const check = () => {
    if (newStarted() > 0) expect(running()).toBeLessThanOrEqual(3);
  };
  // A reconciler run within the settle time reads every shard and counts u0 and u1: the adoption has not settled, so
  // the counter keeps admitting nothing (1 free unit by its count).
  world.clock.advance(10_000);
  await world.reconciler.run();
  await deliverSent(world);
  check();
  // After those reads, still within the settle time: the old instance takes two more slots uncounted, and a fresh
  // instance on the old configuration (its first take of the pool follows the configuration it knows: unlimited) does
  // not switch the adopting counter back to an unlimited pool's.
  world.clock.advance(10_000);
  expect(await old.acquirer.process(messageOf(fanout('o1')))).toBe(AcquireResult.Started);
  const fresh = sluiceServices({ ...world.deps, settings: { ...world.settings, ...OLD } });
  expect(await fresh.acquirer.process(messageOf(fanout('o2')))).toBe(AcquireResult.Started);
  check();
  // Counted: u0 and u1 (the first run); not switched back; o1 and o2 uncounted still.
  expect(world.leases.peekPool('fanout')).toMatchObject({ limit: 3, inUse: 2, adopting: true, adoptingSince: since });
  expect(world.ledger.peek('o2')!.lease).toMatchObject({ uncounted: true });
  // Another run within the settle time counts them (4 of 3) and still does not end adopting.
  await world.reconciler.run();
  await deliverSent(world);
  check();
  expect(world.leases.peekPool('fanout')).toMatchObject({ inUse: 4, adopting: true });
  // Settled: the next run ends adopting; nothing fits (4 of 3). Jobs end one by one: n0 starts once fewer than 3 run.
  world.clock.advance(world.settings.adoptSettleMs);
  await world.reconciler.run();
  await deliverSent(world);
  expect(world.leases.peekPool('fanout')).toEqual({ name: 'fanout', limit: 3, inUse: 4 });
  const seen: number[] = [];
  for (const id of ['u0', 'u1', 'o1', 'o2']) {
    await world.completeRun.complete(world.starters.glue.finish(runOf(world, id), 'succeeded'));
    await deliverSent(world);
    check();
    seen.push(running());
  }
  expect(seen).toEqual([3, 3, 2, 1]);
  expect(world.ledger.peek('n0')!.state).toBe('running');
});
