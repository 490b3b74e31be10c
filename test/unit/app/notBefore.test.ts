import fc from 'fast-check';
import { AcquireResult } from '../../../shared/app/acquireJob';
import { Loader } from '../../../shared/app/loadScheduled';
import { sluiceServices } from '../../../shared/app/services';
import { HORIZON_MS } from '../../../shared/domain/notBefore';
import {
  appflowJob,
  CrashSwitch,
  crashable,
  deliverSent,
  glueJob,
  makeQueueDeps as makeDeps,
  messageOf,
  SimulatedCrash,
  T0,
  type FakeWorld,
  type SentMessage,
} from '../../support/fakes';
import type { JobSpec } from '../../../shared/kinds/registry';

const MINUTE = 60_000;
const at = (ms: number) => new Date(ms).toISOString();
const later = (spec: JobSpec, dueAt: number): JobSpec => ({ ...spec, notBefore: at(dueAt) });

/** Every start call made, by job id: a job that ran twice shows twice. */
const starts = (world: FakeWorld) =>
  [...world.starters.appflow.startCalls, ...world.starters.glue.startCalls]
    .filter((c) => c.result === 'started')
    .map((c) => c.jobId)
    .sort();

describe('jobs with notBefore: the acquirer', () => {
  test('a notBefore in the past starts at once, like a job without one', async () => {
    const world = makeDeps();
    expect(await world.acquirer.process(messageOf(later(appflowJob('a'), T0 - 3_600_000)))).toBe(AcquireResult.Started);
    expect(world.ledger.peek('a')).toMatchObject({ state: 'running', startedAt: T0 });
  });

  test('due within a second: the acquirer waits the rest and starts it at its time, with no message', async () => {
    const world = makeDeps();
    const result = await world.acquirer.process(messageOf(later(appflowJob('a'), T0 + 420)));
    expect(result).toBe(AcquireResult.Started);
    expect(world.ledger.peek('a')).toMatchObject({ state: 'running', startedAt: T0 + 420 });
    expect(world.queue.sent).toEqual([]);
  });

  test('due in 10 minutes: registered scheduled, no slot, one delayed copy of whole seconds; it starts at its time', async () => {
    const world = makeDeps();
    const dueAt = T0 + 10 * MINUTE + 250;
    const spec = later(appflowJob('a'), dueAt);
    // Act: the first delivery
    expect(await world.acquirer.process(messageOf(spec))).toBe(AcquireResult.Scheduled);
    // Assess: known, holds nothing, one message that lands within a second before its time
    expect(world.ledger.peek('a')).toMatchObject({ state: 'scheduled', version: 1 });
    expect(world.leases.poolView('default')?.inUse ?? 0).toBe(0);
    expect(world.queue.sent.map((m) => [JSON.parse(m.body) as unknown, m.delaySeconds])).toEqual([[spec, 600]]);
    expect(world.store.dueIndexed()).toEqual([]);
    expect(starts(world)).toEqual([]);
    // Act: the delayed copy arrives (600 s later) and waits the 250 ms left
    const delivered = await deliverSent(world);
    expect(delivered.map((d) => d.result)).toEqual([AcquireResult.Started]);
    expect(world.ledger.peek('a')).toMatchObject({ state: 'running', startedAt: dueAt });
    expect(starts(world)).toEqual(['a']);
  });

  test('a duplicate of a scheduled job is dropped; the job starts once', async () => {
    const world = makeDeps();
    const spec = later(glueJob('g'), T0 + 5 * MINUTE);
    expect(await world.acquirer.process(messageOf(spec))).toBe(AcquireResult.Scheduled);
    expect(await world.acquirer.process(messageOf(spec))).toBe(AcquireResult.Duplicate);
    await deliverSent(world);
    expect(starts(world)).toEqual(['g']);
    expect(world.ledger.peek('g')!.state).toBe('running');
  });

  test('another job under a scheduled id is dead-lettered, not scheduled', async () => {
    const world = makeDeps();
    await world.acquirer.process(messageOf(later(glueJob('g'), T0 + 2 * 3_600_000)));
    expect(await world.acquirer.process(messageOf(later(glueJob('g', 'default', 'other'), T0 + 2 * 3_600_000)))).toBe(
      AcquireResult.DeadLettered,
    );
    expect(world.queue.deadLettered[0]!.reason).toMatch(/already used for a different job/);
  });

  test('its place among waiting jobs counts from notBefore, not from when it was sent', async () => {
    const world = makeDeps(); // default pool: 2 slots
    for (const id of ['r1', 'r2']) await world.acquirer.process(messageOf(appflowJob(id)));
    // Sent first, due in 14 minutes.
    expect(await world.acquirer.process(messageOf(later(appflowJob('sched'), T0 + 14 * MINUTE)))).toBe(AcquireResult.Scheduled);
    // Sent 5 minutes later, due at once: it waits ahead of the scheduled one.
    world.clock.advanceTo(T0 + 5 * MINUTE);
    expect(await world.acquirer.process(messageOf(appflowJob('early')))).toBe(AcquireResult.Waiting);
    await deliverSent(world); // the scheduled job's copy: it is due now, and parks
    expect(world.ledger.peek('sched')!.state).toBe('waiting');
    // Arrives after the scheduled job's time: behind it.
    world.clock.advanceTo(T0 + 20 * MINUTE);
    expect(await world.acquirer.process(messageOf(appflowJob('late')))).toBe(AcquireResult.Waiting);
    expect(world.store.allWaiters().map((w) => w.jobId)).toEqual(['early', 'sched', 'late']);
  });
});

describe('jobs with notBefore beyond 15 minutes: the due index and the loader', () => {
  test('held on the due index with no message and no slot; the loader sends it within 15 minutes; it starts at its time', async () => {
    const world = makeDeps();
    const dueAt = T0 + 2 * 86_400_000 + 123;
    expect(await world.acquirer.process(messageOf(later(appflowJob('far'), dueAt)))).toBe(AcquireResult.Scheduled);
    expect(world.store.dueIndexed()).toEqual(['far']);
    expect(world.queue.sent).toEqual([]);
    // A loader run long before: nothing to send.
    world.clock.advanceTo(dueAt - HORIZON_MS - 5 * MINUTE);
    expect(await world.loader.run()).toMatchObject({ loaded: 0, finished: true });
    expect(world.queue.sent).toEqual([]);
    // Within the horizon: sent with DelaySeconds = the whole seconds left, moved to queued, off the index.
    world.clock.advanceTo(dueAt - 14 * MINUTE - 500);
    expect(await world.loader.run()).toMatchObject({ loaded: 1, finished: true });
    expect(world.queue.sent.map((m) => m.delaySeconds)).toEqual([840]);
    expect(world.ledger.peek('far')!.state).toBe('queued');
    expect(world.store.dueIndexed()).toEqual([]);
    // Runs again: nothing more.
    expect(await world.loader.run()).toMatchObject({ loaded: 0 });
    const delivered = await deliverSent(world);
    expect(delivered.map((d) => d.result)).toEqual([AcquireResult.Started]);
    expect(world.ledger.peek('far')).toMatchObject({ state: 'running', startedAt: dueAt });
  });

  test('a loader that missed its runs (down for an hour) loads the overdue jobs from its cursor; they start at once', async () => {
    const world = makeDeps();
    await world.loader.run(); // sets the cursor
    const dueAt = T0 + 3_600_000;
    await world.acquirer.process(messageOf(later(glueJob('g'), dueAt)));
    world.clock.advanceTo(dueAt + 30 * MINUTE);
    expect(await world.loader.run()).toMatchObject({ loaded: 1 });
    expect(world.queue.sent.map((m) => m.delaySeconds)).toEqual([0]);
    await deliverSent(world);
    expect(world.ledger.peek('g')!.state).toBe('running');
  });

  test('a loader crashing mid-batch, then run again (and twice at once): every job starts, none twice', async () => {
    const world = makeDeps();
    const dueAt = T0 + 86_400_000;
    const ids = Array.from({ length: 40 }, (_, i) => `job-${String(i).padStart(2, '0')}`);
    for (const id of ids) await world.acquirer.process(messageOf(later(appflowJob(id, 'big'), dueAt + ids.indexOf(id))));
    await world.poolAdmin.setLimit('big', 100);
    world.clock.advanceTo(dueAt - 10 * MINUTE);
    // A loader whose process dies after its 7th send (the message sent, its `load` never written).
    const crash = new CrashSwitch();
    crash.armOn('queue.send', { occurrence: 7, when: 'after' });
    const dying = new Loader({ ...world.deps, queue: crashable(world.queue, crash, 'queue') }, { concurrency: 1 });
    await expect(dying.run()).rejects.toBeInstanceOf(SimulatedCrash);
    expect(world.ledger.all().filter((r) => r.state === 'queued').length).toBe(6);
    // Two loaders at once afterwards.
    const [a, b] = await Promise.all([world.loader.run(), sluiceServices(world.deps).loader.run()]);
    expect(a.loaded + b.loaded).toBe(34);
    await deliverSent(world);
    expect(starts(world)).toEqual(ids);
    expect(world.ledger.all().every((r) => r.state === 'running')).toBe(true);
  });
});

/** Delivers the messages in flight that are available by `until`, in order (and those their deliveries send). */
async function deliverUntil(world: FakeWorld, inFlight: Array<SentMessage & { availableAt: number }>, until: number): Promise<void> {
  for (;;) {
    for (const m of world.queue.takeSent()) inFlight.push({ ...m, availableAt: (m.sentAt ?? world.clock.now()) + m.delaySeconds * 1000 });
    inFlight.sort((a, b) => a.availableAt - b.availableAt);
    if (inFlight.length === 0 || inFlight[0]!.availableAt > until) return;
    const next = inFlight.shift()!;
    world.clock.advanceTo(next.availableAt);
    await world.acquirer.process({ messageId: next.messageId, body: next.body, reservedHint: next.reserved });
  }
}

describe('the loader under crashes: a property', () => {
  test('whatever call a loader dies at, and however many loaders run after, every job starts once and never before its time', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 20 * MINUTE, max: 2 * 3_600_000 }), { minLength: 1, maxLength: 12 }),
        fc.constantFrom('queue.send', 'schedule.load', 'ledger.get'),
        fc.integer({ min: 1, max: 12 }),
        fc.constantFrom<'before' | 'after'>('before', 'after'),
        fc.integer({ min: 1, max: 3 }),
        async (dues, at, occurrence, when, loaders) => {
          const world = makeDeps();
          await world.poolAdmin.setLimit('big', 100);
          const ids = dues.map((_, i) => `job-${i}`);
          for (const [i, ahead] of dues.entries())
            expect(await world.acquirer.process(messageOf(later(appflowJob(ids[i]!, 'big'), T0 + ahead)))).toBe(AcquireResult.Scheduled);
          // A loader run every 2 minutes until the last job is due; the first of each round may die at the armed call.
          const last = T0 + Math.max(...dues);
          const inFlight: Array<SentMessage & { availableAt: number }> = [];
          for (let now = T0; now <= last; now += 2 * MINUTE) {
            world.clock.advanceTo(now);
            const crash = new CrashSwitch();
            crash.armOn(at, { occurrence, when });
            const wrapped = {
              ...world.deps,
              queue: crashable(world.queue, crash, 'queue'),
              schedule: crashable(world.store, crash, 'schedule'),
              ledger: crashable(world.store, crash, 'ledger'),
            };
            await new Loader(wrapped, { concurrency: 2 }).run().catch((error: unknown) => {
              if (!(error instanceof SimulatedCrash)) throw error;
            });
            await Promise.all(Array.from({ length: loaders }, () => world.loader.run()));
            // Deliver what is available by the next run (later messages stay in flight, as on SQS).
            await deliverUntil(world, inFlight, now + 2 * MINUTE);
          }
          await deliverUntil(world, inFlight, Number.POSITIVE_INFINITY);
          expect(starts(world)).toEqual([...ids].sort());
          for (const [i, ahead] of dues.entries()) expect(world.ledger.peek(ids[i]!)!.startedAt!).toBeGreaterThanOrEqual(T0 + ahead);
        },
      ),
      { numRuns: 60 },
    );
  }, 120_000);
});
