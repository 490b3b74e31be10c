import { deliverSent, type FakeWorld, glueJob, makeDeps, messageOf } from '../../support/fakes';
import type { GlueJob } from '../../../shared/kinds/registry';

/**
 * Weighted jobs on a budget, through the real acquirer and releaser on the in-memory ports: strict order keeps a heavy
 * job at the head from being overtaken; backfill lets in the jobs behind it that end before it could start anyway
 * (shared/domain/backfill.ts, docs/protocol.md "Backfill"); units a hand-over leaves free go to the next waiters.
 */

function job(id: string, weight: number, runSeconds?: number): GlueJob {
  return { ...glueJob(id), pool: 'dpu', weight, ...(runSeconds !== undefined && { runSeconds }) };
}

/** Sends the jobs one after another, 1 ms apart: their wait order is the order given. */
async function send(world: FakeWorld, ...specs: GlueJob[]): Promise<void> {
  for (const spec of specs) {
    world.clock.advance(1);
    await world.acquirer.process(messageOf(spec));
  }
}

async function end(world: FakeWorld, jobId: string): Promise<void> {
  await world.completeRun.complete(world.starters.glue.finish(world.starters.glue.runsOf(jobId)[0]!.executionId, 'succeeded'));
  await deliverSent(world);
}

const running = (world: FakeWorld) =>
  world.starters.glue
    .inProgress()
    .map((run) => run.jobId)
    .sort();

describe('weighted jobs waiting for a budget', () => {
  test('strict order: without run limits, no job behind a heavy head starts while the head cannot', async () => {
    const world = makeDeps({ settings: { pools: { dpu: 20 } } });
    await send(world, job('w0', 10), job('w1', 8), job('w2', 2), job('head', 10), job('a', 1), job('b', 1));
    expect(running(world)).toEqual(['w0', 'w1', 'w2']);
    // w2 ends: 2 units free; the head needs 10. a and b (1 each) would fit, but they would overtake it.
    await end(world, 'w2');
    expect(running(world)).toEqual(['w0', 'w1']);
    expect(world.leases.peekPool('dpu')).toMatchObject({ inUse: 18 });
    // w0 ends: its 10 units go to the head, and the 2 that idled go to a and b, next in line.
    await end(world, 'w0');
    expect(running(world)).toEqual(['a', 'b', 'head', 'w1']);
    expect(world.leases.peekPool('dpu')).toMatchObject({ inUse: 20 });
  });

  test('backfill: jobs behind the head start now when they end before its shadow time; the others wait', async () => {
    const world = makeDeps({ settings: { pools: { dpu: 20 } } });
    // Holders end by 100 s from now (w0, w1) and 10 s (w2).
    await send(world, job('w0', 10, 100), job('w1', 8, 100), job('w2', 2, 10));
    // The head (10) behind them, then: a (1 unit, 30 s), b (1 unit, 500 s: past the shadow time), c (2 units: more
    // than will be left), d (1 unit, no limit), e (1 unit, 20 s).
    await send(world, job('head', 10, 50), job('a', 1, 30), job('b', 1, 500), job('c', 2, 20), job('d', 1), job('e', 1, 20));
    expect(running(world)).toEqual(['w0', 'w1', 'w2']);
    world.clock.advance(5000);
    // w2 ends: 2 units free; the head needs 10 and has them when w0 ends (100 s after it started): a and e end before.
    await end(world, 'w2');
    expect(running(world)).toEqual(['a', 'e', 'w0', 'w1']);
    expect(world.leases.peekPool('dpu')).toMatchObject({ inUse: 20 });
    // The head is not delayed: w0 ends and its units go to the head at once.
    world.clock.advance(10_000);
    await end(world, 'w0');
    expect(running(world)).toEqual(['a', 'e', 'head', 'w1']);
    expect(world.leases.peekPool('dpu')).toMatchObject({ inUse: 20 });
  });

  test('no backfill when a holder without a run limit could free the head its units at any moment', async () => {
    const world = makeDeps({ settings: { pools: { dpu: 20 } } });
    await send(world, job('w0', 10, 100), job('w1', 8), job('w2', 2, 10));
    await send(world, job('head', 10, 50), job('a', 1, 1));
    await end(world, 'w2');
    // 2 free + w1's 8 (it may end now) = 10: the head may start at any moment.
    expect(running(world)).toEqual(['w0', 'w1']);
  });

  test('units a hand-over leaves free go to the next waiters: a 10-unit slot handed to a 1-unit job', async () => {
    const world = makeDeps({ settings: { pools: { dpu: 20 } } });
    await send(world, job('w0', 10), job('w1', 10), job('x', 1), job('y', 5), job('z', 5), job('q', 10));
    await end(world, 'w0');
    // x takes 1 of the 10; y (5) fits the 9 left; z (5) does not fit the 4 then: strict order stops there.
    expect(running(world)).toEqual(['w1', 'x', 'y']);
    expect(world.leases.peekPool('dpu')).toMatchObject({ inUse: 16 });
  });

  test('a head whose reserve found the limit full, the counter then room, keeps its place: the next round lets it in, not the jobs behind it', async () => {
    const world = makeDeps({ settings: { pools: { dpu: 10 } } });
    await send(world, job('w0', 10), job('head', 10, 50), job('a', 1, 5), job('b', 1, 5));
    expect(running(world)).toEqual(['w0']);
    // The operator raises the limit to 20; as the fill reserves for the head, the limit is 10 again for a moment (set
    // back and forth): the head's reserve finds it full, the read of its counter after it finds room.
    const reserve = world.leases.reserve.bind(world.leases);
    let raced = false;
    world.leases.reserve = async (to, now) => {
      if (raced || to.jobId !== 'head') return reserve(to, now);
      raced = true;
      await world.leases.setLimit('dpu', 10);
      const outcome = await reserve(to, now);
      await world.leases.setLimit('dpu', 20);
      return outcome;
    };
    await world.poolAdmin.setLimit('dpu', 20);
    await deliverSent(world);
    expect(raced).toBe(true);
    // Strict order: the 10 free units are the head's; a and b wait behind it.
    expect(running(world)).toEqual(['head', 'w0']);
    expect(world.leases.peekPool('dpu')).toMatchObject({ inUse: 20 });
  });
});
