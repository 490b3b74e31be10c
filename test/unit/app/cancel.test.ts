import { AcquireResult } from '../../../shared/app/acquireJob';
import { CancelJob, CancelOutcome } from '../../../shared/app/cancelJob';
import { appflowJob, deliverSent, glueJob, makeQueueDeps as makeDeps, messageOf, T0, type FakeWorld } from '../../support/fakes';
import type { JobSpec } from '../../../shared/kinds/registry';

const MINUTE = 60_000;
const later = (spec: JobSpec, dueAt: number): JobSpec => ({ ...spec, notBefore: new Date(dueAt).toISOString() });
const canceller = (world: FakeWorld) => new CancelJob({ ...world.deps, schedule: world.store });
const started = (world: FakeWorld) =>
  [...world.starters.appflow.startCalls, ...world.starters.glue.startCalls].filter((c) => c.result === 'started').map((c) => c.jobId);

describe('sluice cancel', () => {
  test('a job scheduled within 15 minutes never starts: its delayed copy meets a cancelled job', async () => {
    const world = makeDeps();
    await world.acquirer.process(messageOf(later(appflowJob('a'), T0 + 5 * MINUTE)));
    expect(await canceller(world).cancel('a')).toEqual({ outcome: CancelOutcome.Cancelled, state: 'scheduled' });
    const delivered = await deliverSent(world);
    expect(delivered.map((d) => d.result)).toEqual([AcquireResult.Duplicate]);
    expect(started(world)).toEqual([]);
    expect(world.ledger.peek('a')).toMatchObject({ state: 'cancelled', endedAt: T0 });
  });

  test('a job on the due index never starts: it leaves the index, the loader sends nothing', async () => {
    const world = makeDeps();
    const dueAt = T0 + 86_400_000;
    await world.acquirer.process(messageOf(later(glueJob('g'), dueAt)));
    expect((await canceller(world).cancel('g')).outcome).toBe(CancelOutcome.Cancelled);
    expect(world.store.dueIndexed()).toEqual([]);
    world.clock.advanceTo(dueAt - 10 * MINUTE);
    expect(await world.loader.run()).toMatchObject({ loaded: 0 });
    expect(world.queue.sent).toEqual([]);
  });

  test('a job the loader sent already (queued, its message on its way) never starts', async () => {
    const world = makeDeps();
    const dueAt = T0 + 86_400_000;
    await world.acquirer.process(messageOf(later(glueJob('g'), dueAt)));
    world.clock.advanceTo(dueAt - 10 * MINUTE);
    await world.loader.run();
    expect((await canceller(world).cancel('g')).outcome).toBe(CancelOutcome.Cancelled);
    expect((await deliverSent(world)).map((d) => d.result)).toEqual([AcquireResult.Duplicate]);
    expect(started(world)).toEqual([]);
  });

  test('a waiting job never starts: its waiter item goes with it, and a release hands the slot to the next one', async () => {
    const world = makeDeps(); // default pool: 2 slots
    for (const id of ['r1', 'r2']) await world.acquirer.process(messageOf(appflowJob(id)));
    for (const id of ['w1', 'w2']) expect(await world.acquirer.process(messageOf(appflowJob(id)))).toBe(AcquireResult.Waiting);
    expect(await canceller(world).cancel('w1')).toEqual({ outcome: CancelOutcome.Cancelled, state: 'waiting' });
    expect(world.store.allWaiters().map((w) => w.jobId)).toEqual(['w2']);
    // r1 ends: its slot goes to w2, not to the cancelled w1.
    const run = world.ledger.peek('r1')!.executionId!;
    await world.completeRun.complete({ kind: 'appflow', executionId: run, outcome: 'succeeded', name: 'flow-r1' });
    await deliverSent(world);
    expect(started(world)).toEqual(['r1', 'r2', 'w2']);
    expect(world.ledger.peek('w1')!.state).toBe('cancelled');
  });

  test('a waiting job whose slot was handed over first is not cancelled: its start is under way', async () => {
    const world = makeDeps();
    for (const id of ['r1', 'r2']) await world.acquirer.process(messageOf(appflowJob(id)));
    await world.acquirer.process(messageOf(appflowJob('w1')));
    const run = world.ledger.peek('r1')!.executionId!;
    await world.completeRun.complete({ kind: 'appflow', executionId: run, outcome: 'succeeded', name: 'flow-r1' });
    expect(await canceller(world).cancel('w1')).toEqual({ outcome: CancelOutcome.Starting, state: 'reserved' });
    await deliverSent(world);
    expect(world.ledger.peek('w1')!.state).toBe('running');
  });

  test('a running job is stopped only with --stop; its run ends it', async () => {
    const world = makeDeps();
    await world.acquirer.process(messageOf(glueJob('g')));
    const run = world.ledger.peek('g')!.executionId!;
    expect(await canceller(world).cancel('g')).toEqual({ outcome: CancelOutcome.Running, state: 'running', executionId: run });
    expect(world.starters.glue.stops).toEqual([]);
    expect(await canceller(world).cancel('g', { stop: true })).toEqual({
      outcome: CancelOutcome.StopRequested,
      state: 'running',
      executionId: run,
    });
    expect(world.starters.glue.stops).toEqual([run]);
  });

  test("a cancel whose answer was lost (applied, the SDK's retry refused) is this call's own: cancelled, and announced once", async () => {
    const world = makeDeps();
    await world.acquirer.process(messageOf(later(appflowJob('a'), T0 + 5 * MINUTE)));
    const cancel = world.store.cancel.bind(world.store);
    jest.spyOn(world.store, 'cancel').mockImplementationOnce(async (...args) => {
      await cancel(...args);
      return false;
    });
    const announced: string[] = [];
    const result = await new CancelJob({
      ...world.deps,
      schedule: world.store,
      onCancelled: async (r) => void announced.push(r.state),
    }).cancel('a');
    expect(result).toEqual({ outcome: CancelOutcome.Cancelled, state: 'scheduled' });
    expect(announced).toEqual(['cancelled']);
  });

  test('a finished or unknown job: nothing to do', async () => {
    const world = makeDeps();
    expect(await canceller(world).cancel('nobody')).toEqual({ outcome: CancelOutcome.NotFound });
    await world.acquirer.process(messageOf(later(appflowJob('a'), T0 + 5 * MINUTE)));
    await canceller(world).cancel('a');
    expect(await canceller(world).cancel('a')).toEqual({ outcome: CancelOutcome.Finished, state: 'cancelled' });
  });
});
