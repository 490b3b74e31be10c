import { AcquireResult } from '../../../shared/app/acquireJob';
import { CompleteRun } from '../../../shared/app/completeRun';
import { SPREAD_MEMORY_MS, SPREAD_WIDTH } from '../../../shared/domain/handOffPick';
import { PassOutcome } from '../../../shared/ports/leaseStore';
import { deliverSent, glueJob, makeQueueDeps as makeDeps, messageOf, type FakeWorld, startGlueJob as start } from '../../support/fakes';

/**
 * Releasers of one pool finishing at once: each tries a different waiter first once it has met the others (a lost race
 * on the pool), within the documented bend (docs/protocol.md: a waiter is let in only while fewer than SPREAD_WIDTH
 * waiters of its priority are ahead of it; never below a higher priority).
 */

const RELEASERS = 16;

/** Limit RELEASERS, all running; `waiting` jobs parked (one a millisecond apart, in id order), some with a priority. */
async function busyPool(waiting: number, priorityOf: (i: number) => number = () => 0) {
  const world = makeDeps({ settings: { pools: { default: RELEASERS } } });
  const runs: string[] = [];
  for (let i = 0; i < RELEASERS; i++) runs.push(await start(world, `r${i}`));
  for (let i = 0; i < waiting; i++) {
    world.clock.advance(1);
    const priority = priorityOf(i);
    const spec = { ...glueJob(`w${String(i).padStart(3, '0')}`), ...(priority !== 0 && { priority }) };
    expect(await world.acquirer.process(messageOf(spec))).toBe(AcquireResult.Waiting);
  }
  return { world, runs };
}

/** Every run of `runs` ends at once, each with its own releaser (`releasers[i % n]`); returns the lost races and who got in. */
async function endTogether(world: FakeWorld, runs: string[], releasers: CompleteRun[]) {
  const waitingBefore = world.leases.allWaiters().map((w) => w.jobId);
  const sentBefore = world.queue.sent.length;
  const passes = jest.spyOn(world.leases, 'pass');
  await Promise.all(runs.map((run, i) => releasers[i % releasers.length]!.complete(world.starters.glue.finish(run, 'succeeded'))));
  const outcomes = await Promise.all(passes.mock.results.map((r) => r.value as Promise<PassOutcome>));
  passes.mockRestore();
  const lost = outcomes.filter((o) => o === PassOutcome.TargetGone).length;
  const letIn = waitingBefore.filter((id) => !world.leases.allWaiters().some((w) => w.jobId === id));
  // The jobs let in start (their wake-ups delivered): they hold the slots now.
  const sent = world.queue.sent.slice(sentBefore).map((m) => JSON.parse(m.body).id as string);
  expect((await deliverSent(world)).every((d) => d.result === AcquireResult.Started)).toBe(true);
  return { lost, letIn, waitingBefore, sent };
}

/** The runs of the jobs `ids` (they hold slots now). */
const runsOf = (world: FakeWorld, ids: string[]) => ids.map((id) => world.ledger.peek(id)!.executionId!);

describe('hand-off with many releasers at once', () => {
  test('releasers that have met each other on a pool try distinct waiters: few lost races, within the bend', async () => {
    // Prepare: 16 releasers (containers), each of which lost a race on the pool already (16 runs ended at once).
    const { world, runs } = await busyPool(100);
    const releasers = Array.from({ length: RELEASERS }, () => new CompleteRun(world.deps));
    const first = await endTogether(world, runs, releasers);
    // Every releaser read the same head: all but one lost at least once (then spread: far fewer than strict order's 120).
    expect(first.lost).toBeGreaterThanOrEqual(RELEASERS - 1);
    expect(first.lost).toBeLessThan(60);
    expect(first.letIn).toHaveLength(RELEASERS);
    // Act: the 16 jobs let in end at once too.
    world.clock.advance(1_000);
    const second = await endTogether(world, runsOf(world, first.letIn), releasers);
    // Assess: 16 releasers reading at the same instant hold 16 consecutive hand-off tickets: 16 different waiters (strict
    // order loses 120 races here, a pick by job id alone about 2).
    expect(second.lost).toBe(0);
    expect(second.letIn).toHaveLength(RELEASERS);
    // The bend: only the first SPREAD_WIDTH waiters were let in.
    const window = second.waitingBefore.slice(0, SPREAD_WIDTH);
    expect(second.letIn.every((id) => window.includes(id))).toBe(true);
    expect([...second.sent].sort()).toEqual([...second.letIn].sort());
  });

  test('without tickets (the store refuses them), releasers spread by their job ids: a few lost races', async () => {
    const { world, runs } = await busyPool(100);
    jest.spyOn(world.leases, 'handOffTicket').mockRejectedValue(new Error('throttled'));
    const releasers = Array.from({ length: RELEASERS }, () => new CompleteRun(world.deps));
    await endTogether(world, runs, releasers);
    world.clock.advance(1_000);
    const second = await endTogether(world, runsOf(world, Object.keys(world.leases.poolView('default')!.holders)), releasers);
    // 16 uniform picks among 64 lose about 1.75 races (then some falling back to a waiter another one picked).
    expect(second.lost).toBeLessThanOrEqual(6);
    expect(second.letIn).toHaveLength(RELEASERS);
    const window = second.waitingBefore.slice(0, SPREAD_WIDTH);
    expect(second.letIn.every((id) => window.includes(id))).toBe(true);
  });

  test('with spreading off (width 1), every release of the burst tries the head again: the races the spread avoids', async () => {
    const { world, runs } = await busyPool(100);
    const releasers = Array.from({ length: RELEASERS }, () => new CompleteRun(world.deps, undefined, { spreadWidth: 1 }));
    await endTogether(world, runs, releasers);
    world.clock.advance(1_000);
    const second = await endTogether(world, runsOf(world, Object.keys(world.leases.poolView('default')!.holders)), releasers);
    expect(second.lost).toBeGreaterThanOrEqual(RELEASERS - 1);
    expect(second.letIn).toEqual(second.waitingBefore.slice(0, RELEASERS));
  });

  test('never below a higher priority: a spreading releaser picks among the waiters of the head priority only', async () => {
    // Prepare: 100 waiters, w000..w004 of priority 5, the others 0.
    const { world, runs } = await busyPool(100, (i) => (i < 5 ? 5 : 0));
    const releasers = Array.from({ length: RELEASERS }, () => new CompleteRun(world.deps));
    const first = await endTogether(world, runs, releasers);
    world.clock.advance(1_000);
    // Five more high-priority jobs arrive; then the burst of 16 releases.
    for (let i = 0; i < 5; i++) {
      world.clock.advance(1);
      expect(await world.acquirer.process(messageOf({ ...glueJob(`hi${i}`), priority: 5 }))).toBe(AcquireResult.Waiting);
    }
    const second = await endTogether(world, runsOf(world, first.letIn), releasers);
    // Assess: all five high-priority ones are let in; the eleven others are normal ones within the window.
    expect(second.letIn.filter((id) => id.startsWith('hi')).sort()).toEqual(['hi0', 'hi1', 'hi2', 'hi3', 'hi4']);
    const normal = second.waitingBefore.filter((id) => !id.startsWith('hi'));
    expect(second.letIn.filter((id) => !id.startsWith('hi')).every((id) => normal.slice(0, SPREAD_WIDTH).includes(id))).toBe(true);
    expect(second.letIn).toHaveLength(RELEASERS);
  });

  test('a releaser that has not lost a race for a while hands its slot to the head again', async () => {
    const { world, runs } = await busyPool(40);
    const releasers = Array.from({ length: RELEASERS }, () => new CompleteRun(world.deps));
    const first = await endTogether(world, runs, releasers);
    world.clock.advance(SPREAD_MEMORY_MS);
    // One at a time now: each gets the oldest.
    const held = runsOf(world, first.letIn);
    for (const [i, run] of held.slice(0, 4).entries()) {
      const { letIn, waitingBefore } = await endTogether(world, [run], [releasers[i]!]);
      expect(letIn).toEqual([waitingBefore[0]]);
    }
  });
});
