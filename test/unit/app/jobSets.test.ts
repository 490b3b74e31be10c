import { FireResult, JobSetRunner, CHECK_OPEN_RUN_EVERY_MS, NOTIFY_GRACE_MS } from '../../../shared/app/jobSets';
import { MAX_LISTED_FAILED_IDS } from '../../../shared/domain/jobSets';
import { JobState } from '../../../shared/domain/jobState';
import { SluiceDetailType } from '../../../shared/ports/eventPublisher';
import { UnknownJobSetError } from '../../../shared/errors';
import { CrashSwitch, crashable, deliverSent, type FakeWorld, makeDeps, SimulatedCrash } from '../../support/fakes';
import { mapKinds } from '../../support/fakes/everyKind';
import { sluiceServices } from '../../../shared/app/services';
import { CompletionResult } from '../../../shared/app/completeRun';
import { PassOutcome } from '../../../shared/ports/leaseStore';
import { parseJobSetsText } from '../../../shared/config/jobSetsFile';

const SETS = parseJobSetsText(
  `
sets:
  - name: nightly
    schedule: cron(0 2 * * ? *)
    jobs:
${Array.from({ length: 12 }, (_, i) => `      - { kind: appflow, flowName: flow-${i} }`).join('\n')}
`,
  'jobs.yml',
);
const AT = '2026-11-27T02:00:00Z';

function runner(world: FakeWorld, deps = world.deps): JobSetRunner {
  return new JobSetRunner({ ...deps, sets: deps.sets! }, SETS);
}

/** Delivers every message, ends every run as `outcome(jobId)` says, until nothing is left. */
/** The set fired on a pool with room for all its jobs at once. */
async function firedWithRoomForAll(): Promise<{ world: FakeWorld; fired: number }> {
  const world = makeDeps({ settings: { pools: { default: 12 } } });
  const fired = world.clock.now();
  await runner(world).fire({ set: 'nightly', scheduledTime: AT });
  return { world, fired };
}

/** One start grace on, the reconciler reads the run and sends its event: well before its 15-minute read of any open run. */
async function completesOneGraceLater(world: FakeWorld, fired: number): Promise<void> {
  world.clock.advance(world.deps.settings.startGraceMs);
  await world.reconciler.run();
  expect(world.events.published.map((e) => e.detail.succeeded)).toEqual([12]);
  expect(world.clock.now() - fired).toBeLessThan(CHECK_OPEN_RUN_EVERY_MS);
}

async function runAll(world: FakeWorld, outcome: (jobId: string) => 'succeeded' | 'failed' = () => 'succeeded'): Promise<void> {
  for (let round = 0; round < 50; round++) {
    await deliverSent(world);
    const run = world.starters.appflow.inProgress()[0];
    if (!run) return;
    await world.completeRun.complete(world.starters.appflow.finish(run.executionId, outcome(run.jobId)));
  }
  throw new Error('runs never ended');
}

describe('job sets', () => {
  // BUG (shared/app/jobSets.ts check): a run's completion written, its answer lost and the SDK's retry meeting its effect
  // ("condition failed"), was taken for another checker's: its event waited for the reconciler's sweep and
  // NOTIFY_GRACE_MS (found by the fault matrix with the DynamoDB fault layer).
  test('a completion whose write applied but was answered "condition failed" is still announced at once', async () => {
    const world = makeDeps({ settings: { pools: { default: 4 } } });
    const complete = world.setRuns.complete.bind(world.setRuns);
    let retried = false;
    world.setRuns.complete = async (...args) => {
      const applied = await complete(...args);
      if (retried) return applied;
      retried = true;
      return complete(...args); // the SDK's retry of a write whose answer was lost
    };
    await runner(world).fire({ set: 'nightly', scheduledTime: AT });
    await runAll(world);
    expect(retried).toBe(true);
    expect(world.events.published).toHaveLength(1);
  });

  test('a fire enqueues every job once; a second fire for the same time sends the same ids and nothing runs twice', async () => {
    const world = makeDeps({ settings: { pools: { default: 3 } } });
    const first = await runner(world).fire({ set: 'nightly', scheduledTime: AT });
    const second = await runner(world).fire({ set: 'nightly', scheduledTime: AT });
    expect([first, second]).toEqual([
      { result: FireResult.Enqueued, run: '20261127T0200Z', jobs: 12, created: true },
      { result: FireResult.Enqueued, run: '20261127T0200Z', jobs: 12, created: false },
    ]);
    await runAll(world);
    const runs = world.starters.appflow.startCalls.filter((c) => c.result === 'started');
    expect(new Set(runs.map((c) => c.jobId)).size).toBe(12);
    expect(world.starters.appflow.runsOf('nightly.20261127T0200Z.' + SETS[0]!.jobs[0]!.key)).toHaveLength(1);
    expect(world.events.published).toHaveLength(1);
  });

  test('the last job to end completes the run: one event with the counts and the failed ids; the run is done', async () => {
    const world = makeDeps({ settings: { pools: { default: 4 } } });
    await runner(world).fire({ set: 'nightly', scheduledTime: AT });
    const failing = `nightly.20261127T0200Z.${SETS[0]!.jobs[5]!.key}`;
    await runAll(world, (id) => (id === failing ? 'failed' : 'succeeded'));
    expect(world.events.published).toEqual([
      {
        detailType: SluiceDetailType.SetRunCompleted,
        detail: expect.objectContaining({
          set: 'nightly',
          run: '20261127T0200Z',
          total: 12,
          succeeded: 11,
          failed: 1,
          failedIds: [failing],
        }),
      },
    ]);
    const run = await world.setRuns.getRun('nightly', '20261127T0200Z');
    expect(run).toMatchObject({ ended: 12, summary: { open: 0, succeeded: 11 } });
    expect(run!.notifiedAt).toBeDefined();
    expect(await world.setRuns.openRuns()).toEqual({ runs: [] });
  });

  test('a job of a set counts itself before the releaser starts the next job: a releaser dying during that start has counted it', async () => {
    const world = makeDeps({ settings: { pools: { default: 4 } } });
    await runner(world).fire({ set: 'nightly', scheduledTime: AT });
    await deliverSent(world);
    const [run] = world.starters.appflow.inProgress();
    // The releaser of the first end dies in the start call of the job its slot goes to (an invocation timed out).
    const crash = new CrashSwitch();
    crash.armOn('appflow.start', { when: 'before' });
    // Every port of the dying invocation is wrapped: once dead, it makes no call at all.
    const releaser = sluiceServices({
      ...world.deps,
      leases: crashable(world.leases, crash, 'leases'),
      ledger: crashable(world.ledger, crash, 'ledger'),
      queue: crashable(world.queue, crash, 'queue'),
      sets: { ...world.deps.sets!, store: crashable(world.deps.sets!.store, crash, 'sets') },
      starters: mapKinds(world.starters, (starter, kind) => crashable(starter, crash, kind)),
    }).completeRun;
    await releaser.complete(world.starters.appflow.finish(run!.executionId, 'succeeded')).catch(() => undefined);
    expect(crash.firedAt).toBe('appflow.start');
    expect(await world.setRuns.getRun('nightly', '20261127T0200Z')).toMatchObject({ ended: 1 });
  });

  test("a release whose answer was lost (applied, the SDK's retry refused) is the releaser's own: the job counts itself, its end is announced, the next job starts now", async () => {
    const world = makeDeps({ settings: { pools: { default: 4 } } });
    await runner(world).fire({ set: 'nightly', scheduledTime: AT });
    await deliverSent(world);
    const [run] = world.starters.appflow.inProgress();
    const pass = world.leases.pass.bind(world.leases);
    jest.spyOn(world.leases, 'pass').mockImplementationOnce(async (...args) => {
      await pass(...args);
      return PassOutcome.Stale;
    });
    expect(await world.completeRun.complete(world.starters.appflow.finish(run!.executionId, 'succeeded'))).toBe(CompletionResult.Released);
    expect(await world.setRuns.getRun('nightly', '20261127T0200Z')).toMatchObject({ ended: 1 });
    expect(world.jobEvents.published.filter((e) => e.detailType === SluiceDetailType.JobEnded)).toHaveLength(1);
    // the job its slot went to is started by this releaser, not left for the reconciler after its start grace
    expect(world.starters.appflow.inProgress()).toHaveLength(4);
  });

  test("a free whose answer was lost is the releaser's own too: the job counts itself", async () => {
    const world = makeDeps({ settings: { pools: { default: 12 } } });
    await runner(world).fire({ set: 'nightly', scheduledTime: AT });
    await deliverSent(world);
    const [run] = world.starters.appflow.inProgress();
    const free = world.leases.free.bind(world.leases);
    jest.spyOn(world.leases, 'free').mockImplementationOnce(async (...args) => {
      await free(...args);
      return false;
    });
    expect(await world.completeRun.complete(world.starters.appflow.finish(run!.executionId, 'succeeded'))).toBe(CompletionResult.Released);
    expect(await world.setRuns.getRun('nightly', '20261127T0200Z')).toMatchObject({ ended: 1 });
  });

  test('no event while any job of the run is still going', async () => {
    const world = makeDeps({ settings: { pools: { default: 4 } } });
    await runner(world).fire({ set: 'nightly', scheduledTime: AT });
    await deliverSent(world);
    for (const run of world.starters.appflow.inProgress())
      await world.completeRun.complete(world.starters.appflow.finish(run.executionId, 'succeeded'));
    expect(world.events.published).toEqual([]);
    expect((await world.setRuns.getRun('nightly', '20261127T0200Z'))!.completedAt).toBeUndefined();
  });

  test('an expander that dies part way: the retried fire sends the rest, every job runs once, one event', async () => {
    const world = makeDeps({ settings: { pools: { default: 5 } } });
    // SendMessageBatch calls went out for the first 4 jobs, then the invocation died
    const queue = {
      send: world.queue.send.bind(world.queue),
      deadLetter: world.queue.deadLetter.bind(world.queue),
      sendAll: async (bodies: readonly string[]) => {
        for (const body of bodies.slice(0, 4)) await world.queue.send(body);
        throw new SimulatedCrash('queue.sendAll');
      },
    };
    const dying = runner(world, { ...world.deps, queue });
    await expect(dying.fire({ set: 'nightly', scheduledTime: AT })).rejects.toThrow(SimulatedCrash);
    expect(world.queue.sent).toHaveLength(4);
    await runner(world).fire({ set: 'nightly', scheduledTime: AT }); // EventBridge Scheduler retries the invocation
    await runAll(world);
    const started = world.starters.appflow.startCalls.filter((c) => c.result === 'started').map((c) => c.jobId);
    expect([started.length, new Set(started).size]).toEqual([12, 12]);
    expect(world.events.published).toHaveLength(1);
  });

  test('a count missed (the releaser died before counting): the reconciler reads the run once its counting has been quiet for the start grace', async () => {
    const world = makeDeps({ settings: { pools: { default: 12 } } });
    const fired = world.clock.now();
    await runner(world).fire({ set: 'nightly', scheduledTime: AT });
    const countEnded = jest.spyOn(world.setRuns, 'countEnded').mockRejectedValueOnce(new Error('function timed out'));
    await runAll(world);
    expect(countEnded).toHaveBeenCalledTimes(12);
    expect(world.events.published).toEqual([]); // 11 counted of 12
    await world.reconciler.run();
    expect(world.events.published).toEqual([]); // not due yet: a count may still be on its way
    world.clock.advance(world.deps.settings.startGraceMs);
    await world.reconciler.run();
    expect(world.events.published.map((e) => e.detail.succeeded)).toEqual([12]);
    // well before the 15 minutes after which any open run is read again
    expect(world.clock.now() - fired).toBeLessThan(CHECK_OPEN_RUN_EVERY_MS);
  });

  test('three counts missed in one run (invocations timing out together): still read once counting has been quiet for the start grace', async () => {
    const { world, fired } = await firedWithRoomForAll();
    jest
      .spyOn(world.setRuns, 'countEnded')
      .mockRejectedValueOnce(new Error('function timed out'))
      .mockRejectedValueOnce(new Error('function timed out'))
      .mockRejectedValueOnce(new Error('function timed out'));
    await runAll(world);
    expect((await world.setRuns.getRun('nightly', '20261127T0200Z'))!.ended).toBe(9);
    await completesOneGraceLater(world, fired);
  });

  test('a count made twice and the last one missed: the run read before its last job ended is read again a start grace later', async () => {
    const { world, fired } = await firedWithRoomForAll();
    const countEnded = world.setRuns.countEnded.bind(world.setRuns);
    let counts = 0;
    jest.spyOn(world.setRuns, 'countEnded').mockImplementation(async (set, run, jobId, at) => {
      counts++;
      if (counts === 1) await countEnded(set, run, `${jobId}-again`, at); // a retry counted with another job's between
      if (counts === 12) throw new Error('function timed out'); // the last job's count is lost
      return countEnded(set, run, jobId, at);
    });
    await runAll(world);
    // the 11th job's count reached the total while the 12th ran: read, one open, nothing since
    expect(await world.setRuns.getRun('nightly', '20261127T0200Z')).toMatchObject({ ended: 12, checkedOpen: 1 });
    expect(world.events.published).toEqual([]);
    await completesOneGraceLater(world, fired);
  });

  test('a completion whose event was not noted as sent is sent again by the reconciler (at least once)', async () => {
    const world = makeDeps({ settings: { pools: { default: 12 } } });
    await runner(world).fire({ set: 'nightly', scheduledTime: AT });
    jest.spyOn(world.events, 'publish').mockRejectedValueOnce(new Error('throttled'));
    await runAll(world);
    expect(world.events.published).toEqual([]);
    world.clock.advance(NOTIFY_GRACE_MS + 1);
    await world.reconciler.run();
    expect(world.events.published).toHaveLength(1);
    await world.reconciler.run();
    expect(world.events.published).toHaveLength(1);
  });

  test('a dead-lettered job counts as failed', async () => {
    const world = makeDeps({ settings: { pools: { default: 12 } } });
    world.starters.appflow.failNextStarts(1, 'permanent');
    await runner(world).fire({ set: 'nightly', scheduledTime: AT });
    await runAll(world);
    const [event] = world.events.published;
    expect(event!.detail).toMatchObject({ succeeded: 11, failed: 1 });
    expect(world.ledger.peek((event!.detail.failedIds as string[])[0]!)!.state).toBe(JobState.Dead);
  });

  test("a dead-letter note whose answer was lost is the acquirer's own: the dead job counts itself on its run", async () => {
    const world = makeDeps({ settings: { pools: { default: 12 } } });
    world.starters.appflow.failNextStarts(1, 'permanent');
    const move = world.ledger.move.bind(world.ledger);
    jest.spyOn(world.ledger, 'move').mockImplementation(async (m, now) => {
      const applied = await move(m, now);
      return m.patch?.deadLetteredAt === undefined ? applied : false; // the note applied, its answer lost
    });
    await runner(world).fire({ set: 'nightly', scheduledTime: AT });
    await runAll(world);
    expect(world.events.published.map((e) => e.detail)).toMatchObject([{ succeeded: 11, failed: 1 }]);
    expect((await world.setRuns.getRun('nightly', '20261127T0200Z'))!.ended).toBe(12);
  });

  test('a fire that died part way and is retried after its set was paused still sends the rest: pausing stops the next fires', async () => {
    const world = makeDeps({ settings: { pools: { default: 12 } } });
    const queue = {
      send: world.queue.send.bind(world.queue),
      deadLetter: world.queue.deadLetter.bind(world.queue),
      sendAll: async (bodies: readonly string[]) => {
        for (const body of bodies.slice(0, 4)) await world.queue.send(body);
        throw new SimulatedCrash('queue.sendAll');
      },
    };
    await expect(runner(world, { ...world.deps, queue }).fire({ set: 'nightly', scheduledTime: AT })).rejects.toThrow(SimulatedCrash);
    await world.setRuns.setPaused('nightly', true);
    // Lambda's retry of the same fire
    expect(await runner(world).fire({ set: 'nightly', scheduledTime: AT })).toMatchObject({ result: FireResult.Enqueued, created: false });
    await runAll(world);
    expect(world.events.published.map((e) => e.detail.succeeded)).toEqual([12]);
    // the next fire of the paused set is skipped
    expect(await runner(world).fire({ set: 'nightly', scheduledTime: '2026-11-28T02:00:00Z' })).toMatchObject({
      result: FireResult.Paused,
    });
  });

  test('a paused set skips its scheduled fires; a run by hand goes ahead, once per invocation id', async () => {
    const world = makeDeps();
    await world.setRuns.setPaused('nightly', true);
    expect(await runner(world).fire({ set: 'nightly', scheduledTime: AT })).toEqual({ result: FireResult.Paused, run: '20261127T0200Z' });
    expect(world.queue.sent).toEqual([]);
    const byHand = await runner(world).fire({ set: 'nightly', invocationId: 'inv-1' });
    expect(byHand).toMatchObject({ result: FireResult.Enqueued, run: 'now-inv-1', created: true });
    expect((await runner(world).fire({ set: 'nightly', invocationId: 'inv-1' })).created).toBe(false);
  });

  test('an unknown set is a named error', async () => {
    await expect(runner(makeDeps()).fire({ set: 'nope', scheduledTime: AT })).rejects.toThrow(UnknownJobSetError);
  });
});

describe('open runs beyond the first page', () => {
  const ONE = parseJobSetsText(`sets:\n  - { name: one, schedule: rate(1 day), jobs: [{ kind: appflow, flowName: only }] }\n`, 'jobs.yml');
  const runId = (i: number) => `r${String(i).padStart(3, '0')}`;

  /** 150 runs of a one-job set, all started; the 120th's job ended and its count was missed; the others still run. */
  async function openRunsWithOneMissedCount(world: FakeWorld): Promise<void> {
    const sets = new JobSetRunner({ ...world.deps, sets: world.deps.sets! }, ONE);
    for (let i = 1; i <= 150; i++) await sets.fire({ set: 'one', invocationId: runId(i) });
    await deliverSent(world);
    const run = world.starters.appflow.inProgress().find((r) => r.jobId === `one.now-${runId(120)}.${ONE[0]!.jobs[0]!.key}`)!;
    jest.spyOn(world.setRuns, 'countEnded').mockRejectedValueOnce(new Error('function timed out'));
    await world.completeRun.complete(world.starters.appflow.finish(run.executionId, 'succeeded'));
    expect(world.events.published).toEqual([]);
    world.clock.advance(CHECK_OPEN_RUN_EVERY_MS + 1);
  }

  test('150 open runs: the 120th, whose last count was missed, is still completed by the reconciler', async () => {
    const world = makeDeps({ settings: { pools: { default: 200 } } });
    await openRunsWithOneMissedCount(world);
    await world.reconciler.run();
    expect(world.events.published.map((e) => e.detail.run)).toEqual([`now-${runId(120)}`]);
  });

  test('a run that cannot be checked is logged and skipped: the runs after it are still checked', async () => {
    const world = makeDeps({ settings: { pools: { default: 200 } } });
    await openRunsWithOneMissedCount(world);
    // the 7th open run's item cannot be completed or marked (a write refused every time)
    const markChecked = world.setRuns.markChecked.bind(world.setRuns);
    jest.spyOn(world.setRuns, 'markChecked').mockImplementation(async (set, run, at, open) => {
      if (run === `now-${runId(7)}`) throw new Error('ValidationException');
      return markChecked(set, run, at, open);
    });
    await world.reconciler.run();
    expect(world.events.published.map((e) => e.detail.run)).toEqual([`now-${runId(120)}`]);
    expect(world.log.entries.some((e) => e.message === 'reconciler could not check a job set run')).toBe(true);
  });

  test("a sweep stops at its share of the reconciler's budget and the next one goes on where it stopped", async () => {
    const world = makeDeps({ settings: { pools: { default: 200 }, reconcileBudgetMs: 60_000 } });
    await openRunsWithOneMissedCount(world);
    // checking a run takes a second: a budget of 60 s cannot check 150 runs in one reconciler run
    const checked: string[] = [];
    const took = (run: string) => {
      world.clock.advance(1_000);
      checked.push(run);
    };
    const { markChecked, complete } = world.setRuns;
    jest
      .spyOn(world.setRuns, 'markChecked')
      .mockImplementation(async (set, run, at, open) => (took(run), markChecked.call(world.setRuns, set, run, at, open)));
    jest
      .spyOn(world.setRuns, 'complete')
      .mockImplementation(async (set, run, ...rest) => (took(run), complete.call(world.setRuns, set, run, ...rest)));
    const runs: number[] = [];
    for (let i = 0; i < 10 && world.events.published.length === 0; i++) {
      await world.reconciler.run();
      runs.push(checked.length);
    }
    expect(world.events.published.map((e) => e.detail.run)).toEqual([`now-${runId(120)}`]);
    expect(runs.length).toBeGreaterThan(1); // not all in one run
    // each run read once up to the 120th: the second reconciler run did not begin again from the first
    expect(checked).toEqual(Array.from({ length: 120 }, (_, i) => `now-${runId(i + 1)}`));
  });
});

describe('item sizes', () => {
  // the longest names a set allows: a 48-character set, 40-character keys, a 36-character run name
  const SET = 's'.repeat(48);
  const JOBS = 3_000;
  const key = (i: number) => `k${String(i).padStart(39, '0')}`;
  const LARGE = parseJobSetsText(
    `sets:\n  - name: ${SET}\n    schedule: rate(1 day)\n    jobs:\n${Array.from({ length: JOBS }, (_, i) => `      - { kind: appflow, flowName: f${i}, key: ${key(i)} }`).join('\n')}\n`,
    'jobs.yml',
  );

  test('a large run whose jobs all fail is completed, its summary and event bounded, every failure counted', async () => {
    const world = makeDeps({ settings: { pools: { default: 10 } } });
    world.starters.appflow.failNextStarts(JOBS, 'permanent');
    await new JobSetRunner({ ...world.deps, sets: world.deps.sets! }, LARGE).fire({ set: SET, invocationId: 'i'.repeat(32) });
    await deliverSent(world, { maxMessages: JOBS });
    const run = await world.setRuns.getRun(SET, `now-${'i'.repeat(32)}`);
    expect(run).toMatchObject({ ended: JOBS, summary: { total: JOBS, failed: JOBS, succeeded: 0, open: 0 } });
    expect(run!.summary!.failedIds).toEqual(
      Array.from({ length: MAX_LISTED_FAILED_IDS }, (_, i) => `${SET}.now-${'i'.repeat(32)}.${key(i)}`),
    );
    const [event] = world.events.published;
    expect(event!.detail).toMatchObject({ total: JOBS, failed: JOBS, succeeded: 0 });
    expect(event!.detail.failedIds).toEqual(run!.summary!.failedIds);
  }, 60_000);
});
