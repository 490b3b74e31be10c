import { AcquireResult, Acquirer } from '../../../shared/app/acquireJob';
import { CompleteRun } from '../../../shared/app/completeRun';
import { Drift, HOLDERS_PER_PAGE } from '../../../shared/app/reconcile';
import { TransientStartError } from '../../../shared/errors';
import { waitKey } from '../../../shared/domain/waiting';
import { RunStatus } from '../../../shared/ports/jobStarter';
import {
  appflowJob,
  CrashSwitch,
  crashable,
  deliverSent,
  glueJob,
  makeDeps,
  messageOf,
  SimulatedCrash,
  type FakeWorld,
  parkGlueJob,
  startGlueJob,
} from '../../support/fakes';
import { receiver, unit } from '../../support/demands';

const start = startGlueJob;
const park = parkGlueJob;

describe('Reconciler', () => {
  test('nothing wrong: reports the pools and holders it checked, changes nothing', async () => {
    const world = makeDeps({ settings: { pools: { default: 2, etl: 1 } } });
    await start(world, 'a');
    await start(world, 'b', 'etl');
    const report = await world.reconciler.run();
    expect(report).toEqual({ pools: 2, holdersChecked: 2, unfinished: 0, drift: {} });
    expect(world.ledger.peek('a')!.state).toBe('running');
    expect(world.queue.sent).toEqual([]);
  });

  test('lost event: the status API says the run ended, so the job ends and its slot goes to the oldest waiter', async () => {
    // Prepare: limit 1, r's run ends but its event never comes; w1 waits
    const world = makeDeps({ settings: { pools: { default: 1 } } });
    const run = await start(world, 'r');
    await park(world, 'w1');
    world.starters.glue.setStatus(run, RunStatus.Succeeded);
    // Act
    const report = await world.reconciler.run();
    // Assess
    expect(report.drift).toEqual({ [Drift.LostEvent]: 1 });
    expect(world.ledger.peek('r')).toMatchObject({ state: 'succeeded', executionId: run });
    expect(Object.keys(world.leases.poolView('default')!.holders)).toEqual(['w1']);
    expect((await deliverSent(world)).map((d) => d.result)).toEqual([AcquireResult.Started]);
  });

  test('lost event of a run whose record failed (job running, no run reference): the slot still comes back', async () => {
    // Prepare: recordRun fails (a throttled write) while the move to running succeeds; the event is then only noted
    const world = makeDeps({ settings: { pools: { default: 1 } } });
    const recordRun = world.ledger.recordRun.bind(world.ledger);
    world.ledger.recordRun = () => Promise.reject(new Error('ProvisionedThroughputExceededException'));
    await expect(world.acquirer.process(messageOf(glueJob('r')))).rejects.toThrow('ProvisionedThroughputExceededException');
    world.ledger.recordRun = recordRun;
    const run = world.ledger.peek('r')!.executionId!;
    expect(await world.completeRun.complete(world.starters.glue.finish(run, 'succeeded'))).toBe('noted');
    await park(world, 'w1');
    // Act
    const report = await world.reconciler.run();
    // Assess
    expect(report.drift).toEqual({ [Drift.LostEvent]: 1 });
    expect(world.ledger.peek('r')).toMatchObject({ state: 'succeeded', executionId: run });
    expect(Object.keys(world.leases.poolView('default')!.holders)).toEqual(['w1']);
  });

  test('an overdue run whose record failed (job running, no run reference): the slot still comes back', async () => {
    const world = makeDeps();
    const recordRun = world.ledger.recordRun.bind(world.ledger);
    world.ledger.recordRun = () => Promise.reject(new Error('ProvisionedThroughputExceededException'));
    await expect(world.acquirer.process(messageOf(glueJob('r')))).rejects.toThrow('ProvisionedThroughputExceededException');
    world.ledger.recordRun = recordRun;
    world.clock.advance(48 * 3600_000 + 1);
    expect((await world.reconciler.run()).drift).toEqual({ [Drift.Overdue]: 1 });
    expect(world.ledger.peek('r')!.state).toBe('failed');
    expect(world.leases.poolView('default')).toEqual(expect.objectContaining({ inUse: 0, holders: {} }));
  });

  test('a run the status API reports failed ends as failed', async () => {
    const world = makeDeps();
    const run = await start(world, 'r');
    world.starters.glue.setStatus(run, RunStatus.Failed);
    await world.reconciler.run();
    expect(world.ledger.peek('r')).toMatchObject({ state: 'failed', lastError: 'found ended by the reconciler' });
  });

  test.each([RunStatus.InProgress, RunStatus.Unknown])('a run reported %s (not overdue) keeps its slot', async (status) => {
    const world = makeDeps();
    const run = await start(world, 'r');
    world.starters.glue.setStatus(run, status);
    world.clock.advance(3600_000);
    const report = await world.reconciler.run();
    expect(report.drift).toEqual({});
    expect(world.ledger.peek('r')!.state).toBe('running');
    expect(world.leases.poolView('default')!.holders).toHaveProperty('r');
    expect(world.starters.glue.statusCalls).toEqual([run]);
  });

  describe('a slot kept for a start of unknown outcome (a dead job that may have a run going)', () => {
    /** g1's first start got no answer and the retry budget is spent: dead-lettered, keeping its slot. */
    async function givenUpKeepingSlot(world: FakeWorld): Promise<void> {
      world.starters.glue.failNextStartWith(new TransientStartError('StartJobRun: socket hang up', 'Error', { definite: false }));
      expect(await world.acquirer.process(messageOf(glueJob('g1')))).toBe(AcquireResult.RetryScheduled);
      world.clock.advance(world.settings.backoff.retryForSeconds * 1000);
      world.starters.glue.failNextStarts(1, 'transient');
      await deliverSent(world);
      expect(world.ledger.peek('g1')).toMatchObject({ state: 'dead', lease: { pool: 'default' } });
    }

    test("is kept until leaseUntil (the kind's maximum run time), then given back and handed on", async () => {
      const world = makeDeps({ settings: { pools: { default: 1 } } });
      await givenUpKeepingSlot(world);
      await park(world, 'w1');
      expect((await world.reconciler.run()).drift).toEqual({});
      world.clock.advance(world.settings.maxRunMs.glue);
      expect((await world.reconciler.run()).drift).toEqual({ [Drift.KeptSlotFreed]: 1 });
      expect(world.ledger.peek('g1')).toMatchObject({ state: 'dead' });
      expect(world.ledger.peek('g1')!.lease).toBeUndefined();
      expect(Object.keys(world.leases.poolView('default')!.holders)).toEqual(['w1']);
    });

    test('a stale copy of the job cannot free it (issue 8, defect 7): the slot stays until its run must have ended', async () => {
      const world = makeDeps({ settings: { pools: { default: 1 } } });
      await givenUpKeepingSlot(world);
      // A duplicate copy of g1's message, and a newcomer
      expect(await world.acquirer.process(messageOf(glueJob('g1')))).toBe(AcquireResult.Duplicate);
      expect(await world.acquirer.process(messageOf(glueJob('n1')))).toBe(AcquireResult.Waiting);
      expect(world.leases.poolView('default')).toMatchObject({ inUse: 1, holders: { g1: expect.anything() } });
    });
  });

  test('a run whose status calls keep failing (its job deleted) still gives its slot back at its maximum run time (issue 8, defect 5)', async () => {
    const world = makeDeps({ settings: { pools: { default: 1 } } });
    const run = await start(world, 'g1');
    await park(world, 'w1');
    jest
      .spyOn(world.starters.glue, 'status')
      .mockRejectedValue(Object.assign(new Error('job not found'), { name: 'EntityNotFoundException' }));
    expect((await world.reconciler.run()).drift).toEqual({});
    world.clock.advance(world.settings.maxRunMs.glue + 1);
    expect((await world.reconciler.run()).drift).toEqual({ [Drift.Overdue]: 1 });
    expect(world.ledger.peek('g1')).toMatchObject({
      state: 'failed',
      executionId: run,
      lastError: expect.stringMatching(/maximum run time/),
    });
    expect(Object.keys(world.leases.poolView('default')!.holders)).toEqual(['w1']);
  });

  describe('bounded and fair', () => {
    /** Each status call takes a second of the manual clock, so the time budget runs out part way. */
    function slowStatus(world: FakeWorld): string[] {
      const checked: string[] = [];
      const status = world.starters.appflow.status.bind(world.starters.appflow);
      jest.spyOn(world.starters.appflow, 'status').mockImplementation(async (job, id) => {
        checked.push(job.id);
        world.clock.advance(1000);
        return status(job, id);
      });
      return checked;
    }

    test('pools are checked a page at a time in turn: a large pool does not starve a small one', async () => {
      const world = makeDeps({ settings: { pools: { big: 120, small: 1 }, reconcileBudgetMs: 3_600_000 } });
      for (let i = 0; i < 120; i++) await world.acquirer.process(messageOf(appflowJob(`b${String(i).padStart(3, '0')}`, 'big')));
      await world.acquirer.process(messageOf(appflowJob('s1', 'small')));
      const checked = slowStatus(world);
      const report = await world.reconciler.run();
      expect(report).toMatchObject({ pools: 2, holdersChecked: 121, unfinished: 0 });
      // one page of the big pool (50), then the small pool, then the rest
      expect(checked.indexOf('s1')).toBe(HOLDERS_PER_PAGE);
    });

    test('a run stops at its time budget and the next run continues where it stopped', async () => {
      const world = makeDeps({ settings: { pools: { big: 120 }, reconcileBudgetMs: 60_000, reconcileConcurrency: 1 } });
      for (let i = 0; i < 120; i++) await world.acquirer.process(messageOf(appflowJob(`b${String(i).padStart(3, '0')}`, 'big')));
      const checked = slowStatus(world);
      const first = await world.reconciler.run();
      const second = await world.reconciler.run();
      expect(first).toMatchObject({ holdersChecked: 100, unfinished: 1 });
      expect(second).toMatchObject({ holdersChecked: 20, unfinished: 0 });
      expect(new Set(checked).size).toBe(120);
    });
  });

  describe('stale reservation (a slot handed to a waiting job whose message never came)', () => {
    async function reservedWithoutMessage(world: FakeWorld, keepWaiter: boolean): Promise<void> {
      const run = await start(world, 'r');
      await park(world, 'w1');
      const crash = new CrashSwitch();
      // the hand-off dies right after moving the slot to w1, before sending w1's message
      crash.armOn('leases.pass', { when: 'after' });
      const dying = new CompleteRun({
        ...world.deps,
        leases: crashable(world.leases, crash, 'leases'),
        queue: crashable(world.queue, crash, 'queue'),
      });
      await expect(dying.complete(world.starters.glue.finish(run, 'succeeded'))).rejects.toThrow(SimulatedCrash);
      expect(world.leases.poolView('default')!.holders).toHaveProperty('w1');
      expect(world.queue.sent).toEqual([]);
      if (!keepWaiter) await world.leases.removeWaiter('default', waitKey(world.ledger.peek('w1')!.firstSeenAt, 'w1'));
    }

    test('re-sent through its waiter after the grace period, not before', async () => {
      // Prepare
      const world = makeDeps({ settings: { pools: { default: 1 } } });
      await reservedWithoutMessage(world, true);
      // Act 1: within the grace
      const early = await world.reconciler.run();
      // Act 2: after it
      world.clock.advance(world.settings.reservationGraceMs + 1);
      const late = await world.reconciler.run();
      // Assess
      expect(early.drift).toEqual({});
      expect(late.drift).toEqual({ [Drift.LostWakeUp]: 1 });
      expect(world.queue.sent).toEqual([expect.objectContaining({ body: JSON.stringify(glueJob('w1')), reserved: true })]);
      expect(world.leases.allWaiters()).toEqual([]);
      expect((await deliverSent(world)).map((d) => d.result)).toEqual([AcquireResult.Started]);
      expect(world.ledger.peek('w1')!.state).toBe('running');
    });

    test('re-sent from the ledger spec when the waiter is gone', async () => {
      const world = makeDeps({ settings: { pools: { default: 1 } } });
      await reservedWithoutMessage(world, false);
      world.clock.advance(world.settings.reservationGraceMs + 1);
      expect((await world.reconciler.run()).drift).toEqual({ [Drift.LostWakeUp]: 1 });
      expect(world.queue.sent.map((m) => m.body)).toEqual([JSON.stringify(glueJob('w1'))]);
      expect((await deliverSent(world)).map((d) => d.result)).toEqual([AcquireResult.Started]);
    });
  });

  describe('overdue runs', () => {
    test('a run past its kind maximum fails and frees its slot; not stopped unless configured', async () => {
      // Prepare: a Glue run, 48 h maximum
      const world = makeDeps({ settings: { pools: { default: 1 } } });
      const run = await start(world, 'r');
      await park(world, 'w1');
      world.clock.advance(48 * 3600_000);
      expect((await world.reconciler.run()).drift).toEqual({});
      // Act
      world.clock.advance(1);
      const report = await world.reconciler.run();
      // Assess
      expect(report.drift).toEqual({ [Drift.Overdue]: 1 });
      expect(world.ledger.peek('r')).toMatchObject({ state: 'failed', lastError: 'exceeded the maximum run time of 172800 s' });
      expect(world.starters.glue.stops).toEqual([]);
      expect(world.starters.glue.runs.get(run)!.status).toBe(RunStatus.InProgress);
      expect(Object.keys(world.leases.poolView('default')!.holders)).toEqual(['w1']);
    });

    test('with stopOverdueRuns the run is stopped through the job API too', async () => {
      const world = makeDeps({ settings: { stopOverdueRuns: true } });
      expect(await world.acquirer.process(messageOf(appflowJob('a1')))).toBe(AcquireResult.Started);
      const run = world.ledger.peek('a1')!.executionId!;
      world.clock.advance(6 * 3600_000 + 1);
      const report = await world.reconciler.run();
      expect(report.drift).toEqual({ [Drift.Overdue]: 1 });
      expect(world.starters.appflow.stops).toEqual([run]);
      expect(world.starters.appflow.runs.get(run)!.status).toBe(RunStatus.Failed);
      expect(world.ledger.peek('a1')!.state).toBe('failed');
      expect(world.leases.poolView('default')!.inUse).toBe(0);
    });

    test('the late real event of an overdue run changes nothing more', async () => {
      const world = makeDeps({ settings: { stopOverdueRuns: true } });
      const run = await start(world, 'r');
      world.clock.advance(48 * 3600_000 + 1);
      await world.reconciler.run();
      const [stopped] = world.starters.glue.takeEvents();
      expect(await world.completeRun.complete(stopped!)).toBe('already-done');
      expect(world.ledger.peek('r')!.state).toBe('failed');
      expect(world.starters.glue.runs.get(run)!.status).toBe(RunStatus.Failed);
    });

    test('a failure to stop is logged and the slot is still given back', async () => {
      const world = makeDeps({ settings: { stopOverdueRuns: true } });
      await start(world, 'r');
      jest.spyOn(world.starters.glue, 'stop').mockRejectedValueOnce(new Error('AccessDenied'));
      world.clock.advance(48 * 3600_000 + 1);
      expect((await world.reconciler.run()).drift).toEqual({ [Drift.Overdue]: 1 });
      expect(world.log.messages('error')).toContain('could not stop an overdue run');
      expect(world.leases.poolView('default')!.inUse).toBe(0);
    });
  });

  test('idle slots with jobs waiting are filled, oldest first', async () => {
    // Prepare: two waiters while the limit is 0, then the limit is raised behind the services' back
    const world = makeDeps({ settings: { pools: { default: 0 } } });
    await park(world, 'w1');
    world.clock.advance(10);
    await park(world, 'w2');
    world.clock.advance(10);
    await park(world, 'w3');
    await world.leases.setLimit('default', 2);
    // Act
    const report = await world.reconciler.run();
    // Assess
    expect(report.drift).toEqual({ [Drift.IdleSlot]: 1 });
    expect(Object.keys(world.leases.poolView('default')!.holders).sort()).toEqual(['w1', 'w2']);
    expect(world.leases.allWaiters().map((w) => w.jobId)).toEqual(['w3']);
  });

  test('filling skips a waiter a hand-off reserved a moment ago: it is being sent, not sent twice', async () => {
    // Prepare: limit 0 with w1, w2 waiting; the limit goes to 2 and a concurrent hand-off has just reserved w1
    const world = makeDeps({ settings: { pools: { default: 0 } } });
    await park(world, 'w1');
    world.clock.advance(10);
    await park(world, 'w2');
    await world.leases.setLimit('default', 2);
    expect(await world.leases.reserve(receiver('w1', 'default'), world.clock.now())).toBe('reserved');
    // Act
    await world.reconciler.run();
    // Assess: w2 got the free slot; w1 keeps its reservation and was not sent by the reconciler
    expect(Object.keys(world.leases.poolView('default')!.holders).sort()).toEqual(['w1', 'w2']);
    expect(world.queue.sent.map((m) => JSON.parse(m.body).id)).toEqual(['w2']);
    expect(world.leases.allWaiters().map((w) => w.jobId)).toEqual(['w1']);
  });

  test('an error on one slot is logged and the others are still checked', async () => {
    const world = makeDeps();
    const a = await start(world, 'a');
    const b = await start(world, 'b');
    world.starters.glue.setStatus(a, RunStatus.Succeeded);
    world.starters.glue.setStatus(b, RunStatus.Succeeded);
    const status = world.starters.glue.status.bind(world.starters.glue);
    jest.spyOn(world.starters.glue, 'status').mockImplementation(async (job, id) => {
      if (id === a) throw new Error('ThrottlingException');
      return status(job, id);
    });
    const report = await world.reconciler.run();
    expect(report.drift).toEqual({ [Drift.LostEvent]: 1 });
    expect(world.ledger.peek('a')!.state).toBe('running');
    expect(world.ledger.peek('b')!.state).toBe('succeeded');
    expect(world.log.messages('error')).toContain('reconciler could not ask the job API about a run');
  });

  test('a job in starting within the start grace is left to its message', async () => {
    const world = makeDeps();
    world.starters.glue.failNextStartWith(new Error('socket hang up'));
    await expect(world.acquirer.process(messageOf(glueJob('g1')))).rejects.toThrow();
    world.clock.advance(10_000);
    expect((await world.reconciler.run()).drift).toEqual({});
    expect(world.leases.poolView('default')!.holders).toHaveProperty('g1');
    expect(world.queue.sent).toEqual([]);
  });

  test('a stalled start whose message is gone (DLQ after repeated crashes) is re-sent after the start grace and resumes', async () => {
    // Prepare: the acquirer dies right after moving g1 to starting; the message never comes back
    const world = makeDeps({ settings: { pools: { default: 1 } } });
    const crash = new CrashSwitch();
    crash.armOn('leases.take', { when: 'after' });
    await world.leases.createPool('default', 1);
    const dying = new Acquirer({ ...world.deps, leases: crashable(world.leases, crash, 'leases') });
    await expect(dying.process(messageOf(glueJob('g1')))).rejects.toThrow(SimulatedCrash);
    await park(world, 'w1');
    // Act 1: within the grace nothing is done
    world.clock.advance(world.settings.startGraceMs);
    const early = await world.reconciler.run();
    // Act 2: after it, the spec is sent again and the acquirer resumes the start
    world.clock.advance(1);
    const late = await world.reconciler.run();
    const delivered = await deliverSent(world);
    // Assess
    expect(early.drift).toEqual({});
    expect(late.drift).toEqual({ [Drift.StalledStart]: 1 });
    expect(delivered.map((d) => d.result)).toEqual([AcquireResult.Started]);
    expect(world.starters.glue.startCalls).toEqual([expect.objectContaining({ jobId: 'g1', mayHaveStarted: true, result: 'started' })]);
    expect(world.ledger.peek('g1')!.state).toBe('running');
    expect(Object.keys(world.leases.poolView('default')!.holders)).toEqual(['g1']);
  });
});
