import { AcquireResult } from '../../../shared/app/acquireJob';
import { MAX_NOT_BEFORE_AHEAD_MS } from '../../../shared/domain/notBefore';
import { glueJob, makeDeps, messageOf, startGlueJob, T0 } from '../../support/fakes';

/** What a stage lets in, on each delivery: the overrides its policy allows, a notBefore at most a year ahead. */
describe('admission', () => {
  const evil = (id: string) => glueJob(id, 'default', `glue-${id}`, { '--scriptLocation': 's3://attacker/evil.py' });

  test('a job overriding what the stage does not allow is dead-lettered with the setting to change, nothing written', async () => {
    const world = makeDeps({ settings: { pools: { default: 1 }, overrides: {} } });
    expect(await world.acquirer.process(messageOf(evil('e1')))).toBe(AcquireResult.DeadLettered);
    expect(world.queue.deadLettered.map((d) => d.reason)).toEqual([
      "job refused: override arguments '--scriptLocation' is not allowed on this stage (list '--scriptLocation' in overrides.glue.arguments to allow it)",
    ]);
    expect(world.ledger.peek('e1')).toBeUndefined();
    expect(world.starters.glue.startCalls).toHaveLength(0);
  });

  test('a job taken before the policy was narrowed goes on: its wake-up is not refused, its slot is not left behind', async () => {
    const world = makeDeps({ settings: { pools: { default: 1 }, overrides: { glue: { arguments: ['--scriptLocation'] } } } });
    const run = await startGlueJob(world, 'holder');
    expect(await world.acquirer.process(messageOf(evil('waiter')))).toBe(AcquireResult.Waiting);
    world.deps.settings.overrides = {}; // narrowed (a redeploy), while the waiter waits
    await world.completeRun.complete(world.starters.glue.finish(run, 'succeeded'));
    // The releaser handed the slot over and started it in one hop: the spec is the one let in.
    expect(world.ledger.peek('waiter')!.state).toBe('running');
    expect(world.queue.deadLettered).toEqual([]);
    // A different job under a new id with the same override is refused.
    expect(await world.acquirer.process(messageOf(evil('newcomer')))).toBe(AcquireResult.DeadLettered);
  });

  test('a notBefore more than a year ahead is refused; a year ahead is held', async () => {
    const world = makeDeps({ settings: { pools: { default: 1 } } });
    const far = { ...glueJob('far'), notBefore: new Date(T0 + MAX_NOT_BEFORE_AHEAD_MS + 60_000).toISOString() };
    const year = { ...glueJob('year'), notBefore: new Date(T0 + MAX_NOT_BEFORE_AHEAD_MS).toISOString() };
    expect(await world.acquirer.process(messageOf(far))).toBe(AcquireResult.DeadLettered);
    expect(world.queue.deadLettered[0]!.reason).toMatch(/^notBefore .* is more than a year ahead/);
    expect(await world.acquirer.process(messageOf(year))).toBe(AcquireResult.Scheduled);
  });
});
