import { AcquireResult } from '../../../shared/app/acquireJob';
import { FULL_HINT_MS } from '../../../shared/domain/fullHint';
import { appflowJob, makeQueueDeps as makeDeps, messageOf } from '../../support/fakes';

/**
 * An acquirer that just saw a pool full parks the next arrivals for it at once, with no take bound to fail (issue 13:
 * requests per job, and the acquirer's work in a burst). The default pool has limit 2 in the test settings.
 */
describe('a pool seen full', () => {
  test('the next first delivery parks with no take; after the hint is stale, a take is tried again', async () => {
    const world = makeDeps();
    for (const id of ['a', 'b']) expect(await world.acquirer.process(messageOf(appflowJob(id)))).toBe(AcquireResult.Started);
    const take = jest.spyOn(world.leases, 'take');
    expect(await world.acquirer.process(messageOf(appflowJob('c')))).toBe(AcquireResult.Waiting); // the take that fails
    expect(take).toHaveBeenCalledTimes(1);

    expect(await world.acquirer.process(messageOf(appflowJob('d')))).toBe(AcquireResult.Waiting);
    expect(take).toHaveBeenCalledTimes(1);
    expect(world.ledger.peek('d')).toMatchObject({ state: 'waiting' });

    world.clock.advance(FULL_HINT_MS);
    expect(await world.acquirer.process(messageOf(appflowJob('e')))).toBe(AcquireResult.Waiting);
    expect(take).toHaveBeenCalledTimes(2);
    // Parked in arrival order: the waiting list is c, d, e.
    expect(world.leases.allWaiters().map((w) => w.jobId)).toEqual(['c', 'd', 'e']);
  });

  test('a wrong hint costs no slot and loses no job: a slot freed meanwhile goes to the first waiter at once', async () => {
    const world = makeDeps();
    for (const id of ['a', 'b']) await world.acquirer.process(messageOf(appflowJob(id)));
    await world.acquirer.process(messageOf(appflowJob('c'))); // parks, and the pool is noted full
    // Two slots freed behind the acquirer's back (a hand-off passes one to c; the other is freed)
    await world.completeRun.complete(world.starters.appflow.finish(world.ledger.peek('a')!.executionId!, 'succeeded'));
    await world.completeRun.complete(world.starters.appflow.finish(world.ledger.peek('b')!.executionId!, 'succeeded'));

    expect(await world.acquirer.process(messageOf(appflowJob('d')))).toBe(AcquireResult.Waiting);

    // d parked on the hint, then its look at the counter found the free slot and let it in (reserved, sent again).
    expect(world.ledger.peek('d')).toMatchObject({ state: 'reserved' });
    expect(world.leases.allWaiters()).toEqual([]);
    expect(world.leases.poolView('default')!.inUse).toBe(2);
  });
});
