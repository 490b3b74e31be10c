import { AcquireResult, Acquirer } from '../../../shared/app/acquireJob';
import { CompleteRun } from '../../../shared/app/completeRun';
import { MetricName } from '../../../shared/app/deps';
import { Drift, GONE_DETAIL, HOLDERS_PER_PAGE } from '../../../shared/app/reconcile';
import { GONE_GRACE_MS } from '../../../shared/domain/decisions';
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
  TEST_SETTINGS,
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

  test('an overdue run whose record failed (job running, no run reference): kept while it goes on, completed from its record once it ended', async () => {
    const world = makeDeps();
    const recordRun = world.ledger.recordRun.bind(world.ledger);
    world.ledger.recordRun = () => Promise.reject(new Error('ProvisionedThroughputExceededException'));
    await expect(world.acquirer.process(messageOf(glueJob('r')))).rejects.toThrow('ProvisionedThroughputExceededException');
    world.ledger.recordRun = recordRun;
    const run = world.ledger.peek('r')!.executionId!;
    world.clock.advance(48 * 3600_000 + 1);
    expect(await world.reconciler.run()).toMatchObject({ drift: {}, overdue: 1 });
    expect(world.ledger.peek('r')!.state).toBe('running');
    world.starters.glue.setStatus(run, RunStatus.Failed);
    expect((await world.reconciler.run()).drift).toEqual({ [Drift.LostEvent]: 1 });
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

    test('with its run found after the give-up: kept past leaseUntil while the API says the run goes on, given back once it ended', async () => {
      const world = makeDeps({ settings: { pools: { default: 1 } } });
      await givenUpKeepingSlot(world);
      // The run the lost start made turns up (protocol step foundRun: its id recorded on the dead job).
      const { executionId } = await world.starters.glue.start(glueJob('g1'));
      const dead = world.ledger.peek('g1')!;
      expect(await world.ledger.move({ jobId: 'g1', version: dead.version, to: 'dead', patch: { executionId, startedAt: world.clock.now() } }, world.clock.now())).toBe(true);
      world.clock.advance(world.settings.maxRunMs.glue);
      expect(await world.reconciler.run()).toMatchObject({ drift: {}, overdue: 1 });
      expect(world.leases.poolView('default')!.holders).toHaveProperty('g1');
      world.starters.glue.setStatus(executionId, RunStatus.Succeeded);
      expect((await world.reconciler.run()).drift).toEqual({ [Drift.KeptSlotFreed]: 1 });
      expect(world.leases.poolView('default')!.inUse).toBe(0);
    });

    test('with its run found, and the API no longer knowing it: given back once the answer cannot be eventual consistency', async () => {
      const world = makeDeps();
      await givenUpKeepingSlot(world);
      const { executionId } = await world.starters.glue.start(glueJob('g1'));
      const dead = world.ledger.peek('g1')!;
      await world.ledger.move({ jobId: 'g1', version: dead.version, to: 'dead', patch: { executionId, startedAt: world.clock.now() } }, world.clock.now());
      world.starters.glue.forgetRun(executionId);
      expect((await world.reconciler.run()).drift).toEqual({});
      world.clock.advance(GONE_GRACE_MS);
      expect((await world.reconciler.run()).drift).toEqual({ [Drift.KeptSlotFreed]: 1 });
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

  test('a run whose status calls keep failing keeps its slot past its maximum run time: a failure to ask never frees a slot', async () => {
    const world = makeDeps({ settings: { pools: { default: 1 } } });
    const run = await start(world, 'g1');
    await park(world, 'w1');
    jest.spyOn(world.starters.glue, 'status').mockRejectedValue(Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' }));
    world.clock.advance(world.settings.maxRunMs.glue + 1);
    for (let i = 0; i < 3; i++) {
      expect(await world.reconciler.run()).toMatchObject({ drift: {}, overdue: 1 });
      world.clock.advance(120_000);
    }
    expect(world.ledger.peek('g1')).toMatchObject({ state: 'running', executionId: run });
    expect(Object.keys(world.leases.poolView('default')!.holders)).toEqual(['g1']);
    expect(world.metrics.get(MetricName.OverdueRuns, 'default')).toBe(3);
  });

  describe('a run the job API no longer knows (its flow or job deleted, or dropped from its history)', () => {
    test('is ended as failed and its slot handed on once it was recorded long enough ago, not on a fresh "not found"', async () => {
      const world = makeDeps({ settings: { pools: { default: 1 } } });
      const run = await start(world, 'g1');
      await park(world, 'w1');
      world.starters.glue.forgetRun(run);
      // Recorded moments ago: AWS's describe APIs are eventually consistent, "not found" may be a run not visible yet.
      expect((await world.reconciler.run()).drift).toEqual({});
      world.clock.advance(GONE_GRACE_MS - 1);
      expect((await world.reconciler.run()).drift).toEqual({});
      expect(world.ledger.peek('g1')!.state).toBe('running');
      // Older than the grace: the API can no longer be asked about it; nothing else will ever end it.
      world.clock.advance(1);
      expect((await world.reconciler.run()).drift).toEqual({ [Drift.RunGone]: 1 });
      expect(world.ledger.peek('g1')).toMatchObject({ state: 'failed', executionId: run, lastError: GONE_DETAIL });
      expect(Object.keys(world.leases.poolView('default')!.holders)).toEqual(['w1']);
    });

    test("the grace is the kind's maximum run time when that is shorter", async () => {
      const world = makeDeps({ settings: { maxRunMs: { ...TEST_SETTINGS.maxRunMs, glue: 60_000 } } });
      const run = await start(world, 'g1');
      world.starters.glue.forgetRun(run);
      world.clock.advance(59_999);
      expect((await world.reconciler.run()).drift).toEqual({});
      world.clock.advance(1);
      expect((await world.reconciler.run()).drift).toEqual({ [Drift.RunGone]: 1 });
    });
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

  describe('a run past its maximum run time that the job API says goes on', () => {
    test('keeps its slot, every reconcile, with a metric and an error line naming it; not stopped unless configured', async () => {
      // Prepare: a Glue run, 48 h maximum, one job waiting behind it
      const world = makeDeps({ settings: { pools: { default: 1 } } });
      const run = await start(world, 'r');
      await park(world, 'w1');
      world.clock.advance(48 * 3600_000);
      expect(await world.reconciler.run()).toEqual(expect.not.objectContaining({ overdue: expect.anything() }));
      // Act: past the maximum, two reconciles
      world.clock.advance(1);
      const first = await world.reconciler.run();
      world.clock.advance(120_000);
      const second = await world.reconciler.run();
      // Assess: the run goes on, so its slot stays (freeing it would let w1 start beside it, over the limit)
      expect([first, second]).toEqual([expect.objectContaining({ drift: {}, overdue: 1 }), expect.objectContaining({ drift: {}, overdue: 1 })]);
      expect(world.ledger.peek('r')).toMatchObject({ state: 'running', executionId: run });
      expect(world.ledger.peek('r')).not.toHaveProperty('lastError');
      expect(Object.keys(world.leases.poolView('default')!.holders)).toEqual(['r']);
      expect(world.ledger.peek('w1')!.state).toBe('waiting');
      expect(world.starters.glue.runs.get(run)!.status).toBe(RunStatus.InProgress);
      expect(world.starters.glue.stops).toEqual([]);
      expect(world.metrics.get(MetricName.OverdueRuns)).toBe(2);
      expect(world.metrics.get(MetricName.OverdueRuns, 'default')).toBe(2);
      const lines = world.log.entries.filter((e) => e.message === 'run past its maximum run time keeps its slot');
      expect(lines.map((l) => l.level)).toEqual(['error', 'error']);
      expect(lines[1]!.extra).toEqual({
        jobId: 'r',
        pool: 'default',
        kind: 'glue',
        target: 'glue-r',
        executionId: run,
        state: 'running',
        ranSeconds: 48 * 3600 + 120,
        maxRunSeconds: 48 * 3600,
        stop: 'not asked (stopOverdueRuns is off)',
      });
    });

    test.each([RunStatus.Unknown])('the same when its status is %s', async (status) => {
      const world = makeDeps();
      const run = await start(world, 'r');
      world.starters.glue.setStatus(run, status);
      world.clock.advance(48 * 3600_000 + 1);
      expect(await world.reconciler.run()).toMatchObject({ drift: {}, overdue: 1 });
      expect(world.leases.poolView('default')!.holders).toHaveProperty('r');
    });

    test('comes back, and its slot goes to the next job, when the API reports it ended', async () => {
      const world = makeDeps({ settings: { pools: { default: 1 } } });
      const run = await start(world, 'r');
      await park(world, 'w1');
      world.clock.advance(48 * 3600_000 + 1);
      expect(await world.reconciler.run()).toMatchObject({ overdue: 1 });
      world.starters.glue.setStatus(run, RunStatus.Succeeded);
      expect(await world.reconciler.run()).toEqual(expect.objectContaining({ drift: { [Drift.LostEvent]: 1 } }));
      expect(world.ledger.peek('r')!.state).toBe('succeeded');
      expect(Object.keys(world.leases.poolView('default')!.holders)).toEqual(['w1']);
    });

    describe('with stopOverdueRuns', () => {
      test('is asked to stop each reconcile, and its slot comes back only once the API reports the stop took effect', async () => {
        // Prepare: stops take effect later, as AWS's (Glue STOPPING, an ECS task draining)
        const world = makeDeps({ settings: { pools: { default: 1 }, stopOverdueRuns: true }, asyncStops: true });
        const run = await start(world, 'r');
        await park(world, 'w1');
        world.clock.advance(48 * 3600_000 + 1);
        // Act 1: the stop is asked, the run still goes on
        expect(await world.reconciler.run()).toMatchObject({ drift: {}, overdue: 1 });
        world.clock.advance(120_000);
        expect(await world.reconciler.run()).toMatchObject({ drift: {}, overdue: 1 });
        // Assess 1
        expect(world.starters.glue.stops).toEqual([run, run]);
        expect(Object.keys(world.leases.poolView('default')!.holders)).toEqual(['r']);
        expect(world.log.entries.filter((e) => e.message === 'run past its maximum run time keeps its slot').map((e) => e.extra.stop)).toEqual([
          'asked',
          'asked',
        ]);
        // Act 2: the stop takes effect; its event is lost, the next reconcile finds the run ended
        world.starters.glue.confirmStops();
        world.starters.glue.takeEvents();
        world.clock.advance(120_000);
        // Assess 2
        expect(await world.reconciler.run()).toEqual(expect.objectContaining({ drift: { [Drift.LostEvent]: 1 } }));
        expect(world.ledger.peek('r')).toMatchObject({ state: 'failed', lastError: 'found ended by the reconciler' });
        expect(Object.keys(world.leases.poolView('default')!.holders)).toEqual(['w1']);
      });

      test("or by the stopped run's own completion event", async () => {
        const world = makeDeps({ settings: { stopOverdueRuns: true }, asyncStops: true });
        expect(await world.acquirer.process(messageOf(appflowJob('a1')))).toBe(AcquireResult.Started);
        const run = world.ledger.peek('a1')!.executionId!;
        world.clock.advance(6 * 3600_000 + 1);
        await world.reconciler.run();
        expect(world.starters.appflow.stops).toEqual([run]);
        expect(world.leases.poolView('default')!.inUse).toBe(1);
        const [stopped] = world.starters.appflow.confirmStops();
        expect(await world.completeRun.complete(stopped!)).toBe('released');
        expect(world.ledger.peek('a1')).toMatchObject({ state: 'failed', lastError: 'STOPPED' });
        expect(world.leases.poolView('default')!.inUse).toBe(0);
      });

      test('a failure to stop is in its line, the slot kept, and the stop asked again next reconcile', async () => {
        const world = makeDeps({ settings: { stopOverdueRuns: true } });
        const run = await start(world, 'r');
        jest.spyOn(world.starters.glue, 'stop').mockRejectedValueOnce(new Error('AccessDeniedException'));
        world.clock.advance(48 * 3600_000 + 1);
        expect(await world.reconciler.run()).toMatchObject({ drift: {}, overdue: 1 });
        const line = world.log.entries.find((e) => e.message === 'run past its maximum run time keeps its slot')!;
        expect(line.extra.stop).toBe('could not be asked: Error: AccessDeniedException');
        expect(world.leases.poolView('default')!.inUse).toBe(1);
        // The next reconcile asks again; this fake's stop takes effect at once, so the one after finds it ended.
        await world.reconciler.run();
        expect(world.starters.glue.runs.get(run)!.status).toBe(RunStatus.Failed);
        expect((await world.reconciler.run()).drift).toEqual({ [Drift.LostEvent]: 1 });
        expect(world.leases.poolView('default')!.inUse).toBe(0);
      });
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
