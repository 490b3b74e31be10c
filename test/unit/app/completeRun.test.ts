import { SPREAD_MEMORY_MS, SPREAD_WIDTH } from '../../../shared/domain/handOffPick';
import { sluiceServices } from '../../../shared/app/services';
import { PassOutcome } from '../../../shared/ports/leaseStore';
import { Acquirer, AcquireResult } from '../../../shared/app/acquireJob';
import { MetricName } from '../../../shared/app/deps';
import { CompleteRun, CompletionResult } from '../../../shared/app/completeRun';
import { canMove, type JobState } from '../../../shared/domain/jobState';
import { waitKey } from '../../../shared/domain/waiting';
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
  parkGlueJob,
  startGlueJob,
} from '../../support/fakes';
import { receiver, unit } from '../../support/demands';

const start = startGlueJob;
const park = parkGlueJob;

describe('CompleteRun', () => {
  test('marks the job finished and hands the slot to the oldest waiter', async () => {
    // Prepare: limit 1, r runs, w1 w2 w3 wait in that order
    const world = makeDeps({ settings: { pools: { default: 1 } } });
    const run = await start(world, 'r');
    for (const id of ['w1', 'w2', 'w3']) {
      world.clock.advance(1000);
      await park(world, id);
    }
    // Act
    world.clock.advance(1000);
    const result = await world.completeRun.complete(world.starters.glue.finish(run, 'succeeded'));
    // Assess
    expect(result).toBe(CompletionResult.Released);
    expect(world.ledger.peek('r')).toMatchObject({ state: 'succeeded', endedAt: T0 + 4000, executionId: run });
    expect(world.ledger.peek('r')).not.toHaveProperty('lastError');
    expect(world.leases.poolView('default')).toEqual(
      expect.objectContaining({ inUse: 1, holders: { w1: { kind: 'glue', since: T0 + 4000 } } }),
    );
    expect(world.queue.sent.map((m) => [JSON.parse(m.body).id, m.reserved])).toEqual([['w1', true]]);
    expect(world.leases.allWaiters().map((w) => w.jobId)).toEqual(['w2', 'w3']);
  });

  test('FIFO is by first arrival: a job retried later keeps its place ahead of jobs that parked before it', async () => {
    // Prepare: limit 1. old arrives first, but its start is throttled; while it waits for its retry, r starts and
    // w1 parks. Then old's retry arrives and parks behind w1 in time, ahead of it in wait key.
    const world = makeDeps({ settings: { pools: { default: 1 } } });
    world.starters.glue.failNextStarts(1, 'transient');
    expect(await world.acquirer.process(messageOf(glueJob('old')))).toBe(AcquireResult.RetryScheduled);
    const [retry] = world.queue.takeSent();
    world.clock.advance(100);
    const run = await start(world, 'r');
    world.clock.advance(100);
    await park(world, 'w1');
    world.clock.advance(retry!.delaySeconds * 1000);
    expect(await world.acquirer.process({ messageId: retry!.messageId, body: retry!.body })).toBe(AcquireResult.Waiting);
    expect(world.leases.allWaiters().map((w) => w.waitKey)).toEqual([waitKey(T0, 'old'), waitKey(T0 + 200, 'w1')]);
    // Act
    await world.completeRun.complete(world.starters.glue.finish(run, 'failed'));
    // Assess
    expect(Object.keys(world.leases.poolView('default')!.holders)).toEqual(['old']);
  });

  test('a failed run records why', async () => {
    const world = makeDeps();
    const run = await start(world, 'g1');
    await world.completeRun.complete({
      kind: 'glue',
      executionId: run,
      outcome: 'failed',
      name: 'glue-g1',
      detail: 'TIMEOUT: ran out of time',
    });
    expect(world.ledger.peek('g1')).toMatchObject({ state: 'failed', lastError: 'TIMEOUT: ran out of time' });
  });

  test('a duplicate event frees the slot once and hands off once', async () => {
    // Prepare: limit 1, r runs, w1 and w2 wait
    const world = makeDeps({ settings: { pools: { default: 1 } } });
    const run = await start(world, 'r');
    await park(world, 'w1');
    await park(world, 'w2');
    const event = world.starters.glue.finish(run, 'succeeded');
    // Act
    const first = await world.completeRun.complete(event);
    const second = await world.completeRun.complete(event);
    // Assess
    expect([first, second]).toEqual([CompletionResult.Released, CompletionResult.AlreadyDone]);
    expect(world.leases.poolView('default')).toEqual(expect.objectContaining({ inUse: 1, holders: { w1: expect.anything() } }));
    expect(world.queue.sent).toHaveLength(1);
    expect(world.leases.allWaiters().map((w) => w.jobId)).toEqual(['w2']);
  });

  test('racing completions in one pool hand each waiter one slot and send it once', async () => {
    // Prepare: limit 3, three runs, four waiters; all three runs end at once (each releaser reads the same oldest waiter)
    const world = makeDeps({ settings: { pools: { default: 3 } } });
    const runs = [await start(world, 'r1'), await start(world, 'r2'), await start(world, 'r3')];
    for (const id of ['w1', 'w2', 'w3', 'w4']) {
      world.clock.advance(1000);
      await park(world, id);
    }
    // Act
    const results = await Promise.all(runs.map((run) => world.completeRun.complete(world.starters.glue.finish(run, 'succeeded'))));
    // Assess: three waiters hold the slots, each sent exactly once (no duplicate deliveries to absorb). w1 first (all
    // three read it first, in wait order); the releasers that lost read the list again and spread over what is left
    // (docs/protocol.md: the order bends within the first 64 waiters of a priority when releases overlap).
    expect(results).toEqual([CompletionResult.Released, CompletionResult.Released, CompletionResult.Released]);
    const holders = Object.keys(world.leases.poolView('default')!.holders).sort();
    expect(holders).toHaveLength(3);
    expect(holders[0]).toBe('w1');
    expect(world.queue.sent.map((m) => JSON.parse(m.body).id).sort()).toEqual(holders);
    expect(world.leases.allWaiters().map((w) => w.jobId)).toEqual(['w2', 'w3', 'w4'].filter((id) => !holders.includes(id)));
    expect((await deliverSent(world)).map((d) => d.result)).toEqual([AcquireResult.Started, AcquireResult.Started, AcquireResult.Started]);
  });

  test('a releaser that loses the race for the oldest waiter reads the list again and hands its slot to a waiter still there', async () => {
    // Prepare: limit 2, two runs, three waiters; both runs end at once, so both releasers read w1 first
    const world = makeDeps({ settings: { pools: { default: 2 } } });
    const runs = [await start(world, 'r1'), await start(world, 'r2')];
    for (const id of ['w1', 'w2', 'w3']) {
      world.clock.advance(1000);
      await park(world, id);
    }
    const queries = jest.spyOn(world.leases, 'readWaitingList');
    const transfers = jest.spyOn(world.leases, 'pass');
    // Act
    await Promise.all(runs.map((run) => world.completeRun.complete(world.starters.glue.finish(run, 'succeeded'))));
    // Assess: one lost race (a failed transfer to w1), then a new read (w1 gone from it) and a waiter from it, w2 or w3
    // (the loser spreads from now on). Without the new read it would try w2, which its first read named next: the
    // waiter a release in flight with it was likeliest to take meanwhile.
    const tried = transfers.mock.calls.map((call) => call[2].jobId);
    expect(tried.slice(0, 2)).toEqual(['w1', 'w1']);
    expect(tried).toHaveLength(3);
    expect(['w2', 'w3']).toContain(tried[2]);
    expect(queries).toHaveBeenCalledTimes(3);
    expect(queries.mock.calls[2]).toEqual(['default', 1 + SPREAD_WIDTH]);
    expect(Object.keys(world.leases.poolView('default')!.holders).sort()).toEqual(['w1', tried[2]].sort());
    expect(world.queue.sent.map((m) => JSON.parse(m.body).id).sort()).toEqual(['w1', tried[2]].sort());
  });

  test('a release with nobody waiting reads the waiters twice: before the release, and after it for a job that parked meanwhile', async () => {
    const world = makeDeps();
    const run = await start(world, 'r1');
    const releaseReads = jest.spyOn(world.leases, 'readWaitingList');
    const fillReads = jest.spyOn(world.leases, 'oldestWaiters');
    expect(await world.completeRun.complete(world.starters.glue.finish(run, 'succeeded'))).toBe(CompletionResult.Released);
    expect([releaseReads.mock.calls.length, fillReads.mock.calls.length]).toEqual([1, 1]);
    expect(world.leases.poolView('default')).toEqual(expect.objectContaining({ inUse: 0, holders: {} }));
  });

  test('when the waiters read first are reserved by others, each lost race reads again until an unreserved one is let in', async () => {
    // Prepare: r1 runs; w1..w4 wait; concurrent hand-offs have just reserved w1 and w2 (their messages not sent yet)
    const world = makeDeps({ settings: { pools: { default: 1 } } });
    const run = await start(world, 'r1');
    for (const id of ['w1', 'w2', 'w3', 'w4']) {
      world.clock.advance(1000);
      await park(world, id);
    }
    await world.leases.setLimit('default', 3);
    for (const id of ['w1', 'w2']) expect(await world.leases.reserve(receiver(id, 'default'), world.clock.now())).toBe('reserved');
    const transfers = jest.spyOn(world.leases, 'pass');
    const queries = jest.spyOn(world.leases, 'readWaitingList');
    const marks = jest.spyOn(world.leases, 'markRace');
    // Act
    expect(await world.completeRun.complete(world.starters.glue.finish(run, 'succeeded'))).toBe(CompletionResult.Released);
    // Assess: the head first; each waiter tried at most once; every try but the last met a reserved one; the last let in
    // w3 or w4; nobody sent twice
    const tried = transfers.mock.calls.map((call) => call[2].jobId);
    expect(tried[0]).toBe('w1');
    expect(new Set(tried).size).toBe(tried.length);
    expect(tried.slice(0, -1).every((id) => id === 'w1' || id === 'w2')).toBe(true);
    const admitted = tried.at(-1)!;
    expect(['w3', 'w4']).toContain(admitted);
    // A read of the list before the release, then a new one after each race lost (the first is as old as the race).
    expect(queries).toHaveBeenCalledTimes(tried.length);
    // The first lost race marks the list; the next ones, moments later, do not write it again.
    expect(marks.mock.calls).toEqual([['default', world.clock.now()]]);
    expect(Object.keys(world.leases.poolView('default')!.holders).sort()).toEqual(['w1', 'w2', admitted].sort());
    expect(world.queue.sent.map((m) => JSON.parse(m.body).id)).toEqual([admitted]);
  });

  describe('race marks: a race lost in one container makes the releasers of the others spread', () => {
    /** limit 3, r1..r3 running, w1..w6 waiting; `other`: the services of a second container (its own hand-off memory) */
    async function twoContainers() {
      const world = makeDeps({ settings: { pools: { default: 3 } } });
      const runs = [await start(world, 'r1'), await start(world, 'r2'), await start(world, 'r3')];
      for (const id of ['w1', 'w2', 'w3', 'w4', 'w5', 'w6']) {
        world.clock.advance(1000);
        await park(world, id);
      }
      return { world, runs, other: sluiceServices(world.deps) };
    }

    test('the loser marks the list once; a releaser of another container that never lost a race reads the mark and spreads from its first release', async () => {
      // Prepare: r1 and r2 end at once in one container: both read w1, one loses
      const { world, runs, other } = await twoContainers();
      const marks = jest.spyOn(world.leases, 'markRace');
      await Promise.all(runs.slice(0, 2).map((run) => world.completeRun.complete(world.starters.glue.finish(run, 'succeeded'))));
      expect(marks.mock.calls).toEqual([['default', world.clock.now()]]);
      const reads = jest.spyOn(world.leases, 'readWaitingList');
      const tickets = jest.spyOn(world.leases, 'handOffTicket');
      const transfers = jest.spyOn(world.leases, 'pass');
      // Act: r3 ends in the other container, 10 s later
      world.clock.advance(10_000);
      expect(await other.completeRun.complete(world.starters.glue.finish(runs[2]!, 'succeeded'))).toBe(CompletionResult.Released);
      // Assess: its read of the head (2 waiters) carried the mark: it read the whole window, took a ticket and passed at
      // its first try, with no race of its own and no mark written
      expect(reads.mock.calls).toEqual([
        ['default', 2],
        ['default', SPREAD_WIDTH],
      ]);
      expect(tickets).toHaveBeenCalledTimes(1);
      expect(transfers).toHaveBeenCalledTimes(1);
      expect(marks).toHaveBeenCalledTimes(1);
      expect(Object.keys(world.leases.poolView('default')!.holders)).toHaveLength(3);
    });

    test('after a mark, releasers of two more containers that finish at once pass their slots at their first tries', async () => {
      // Prepare: a race was lost a moment ago in some container; two others, which never lost one, release together
      const { world, runs, other } = await twoContainers();
      const third = sluiceServices(world.deps);
      await world.leases.markRace('default', world.clock.now() - 1_000);
      const transfers = jest.spyOn(world.leases, 'pass');
      // Act
      const results = await Promise.all([
        other.completeRun.complete(world.starters.glue.finish(runs[0]!, 'succeeded')),
        third.completeRun.complete(world.starters.glue.finish(runs[1]!, 'succeeded')),
      ]);
      // Assess: two transfers, both passed (without the mark both would offer w1, and one would lose)
      expect(results).toEqual([CompletionResult.Released, CompletionResult.Released]);
      const outcomes = await Promise.all(transfers.mock.results.map((result) => result.value as Promise<string>));
      expect(outcomes).toEqual([PassOutcome.Passed, PassOutcome.Passed]);
      expect(Object.keys(world.leases.poolView('default')!.holders)).toHaveLength(3);
    });

    test('a mark a minute old is no race: the releaser reads the head and tries it first', async () => {
      const { world, runs, other } = await twoContainers();
      await world.leases.markRace('default', world.clock.now() - SPREAD_MEMORY_MS);
      const reads = jest.spyOn(world.leases, 'readWaitingList');
      const tickets = jest.spyOn(world.leases, 'handOffTicket');
      const transfers = jest.spyOn(world.leases, 'pass');
      expect(await other.completeRun.complete(world.starters.glue.finish(runs[0]!, 'succeeded'))).toBe(CompletionResult.Released);
      expect(reads.mock.calls).toEqual([['default', 2]]);
      expect(tickets).not.toHaveBeenCalled();
      expect(transfers.mock.calls.map((call) => call[2].jobId)).toEqual(['w1']);
    });

    test('a mark that cannot be written is logged, and the release goes on', async () => {
      const { world, runs } = await twoContainers();
      jest.spyOn(world.leases, 'markRace').mockRejectedValue(new Error('ProvisionedThroughputExceededException'));
      const results = await Promise.all(
        runs.slice(0, 2).map((run) => world.completeRun.complete(world.starters.glue.finish(run, 'succeeded'))),
      );
      expect(results).toEqual([CompletionResult.Released, CompletionResult.Released]);
      expect(world.log.messages('warn')).toContain('could not mark a waiting list for a lost hand-off race');
      expect(Object.keys(world.leases.poolView('default')!.holders)).toHaveLength(3);
    });
  });

  test('concurrent duplicate events: the slot is freed once', async () => {
    const world = makeDeps({ settings: { pools: { default: 1 } } });
    const run = await start(world, 'r');
    await park(world, 'w1');
    await park(world, 'w2');
    const event = world.starters.glue.finish(run, 'succeeded');
    const results = await Promise.all([
      world.completeRun.complete(event),
      world.completeRun.complete(event),
      world.completeRun.complete(event),
    ]);
    expect(results.filter((r) => r === CompletionResult.Released)).toHaveLength(1);
    expect(world.leases.poolView('default')).toEqual(expect.objectContaining({ inUse: 1, holders: { w1: expect.anything() } }));
    expect(world.leases.allWaiters().map((w) => w.jobId)).toEqual(['w2']);
  });

  test('an event for a run Sluice did not start is only noted and changes nothing else', async () => {
    const world = makeDeps();
    await start(world, 'g1');
    const before = world.leases.poolView('default');
    const result = await world.completeRun.complete({ kind: 'glue', executionId: 'jr_someone_else', outcome: 'succeeded', name: 'x' });
    expect(result).toBe(CompletionResult.Noted);
    expect(world.log.messages('debug')).toContain('completion of a run not recorded, noted for its acquirer');
    expect([world.metrics.get(MetricName.NotedCompletions), world.metrics.get(MetricName.IgnoredEvents)]).toEqual([1, 0]);
    expect(world.leases.poolView('default')).toEqual(before);
    expect(world.ledger.peek('g1')!.state).toBe('running');
  });

  test('an event of another kind with the same execution id is ignored', async () => {
    const world = makeDeps();
    const run = await start(world, 'g1');
    expect(await world.completeRun.complete({ kind: 'appflow', executionId: run, outcome: 'succeeded', name: 'x' })).toBe(
      CompletionResult.Noted,
    );
    expect(world.ledger.peek('g1')!.state).toBe('running');
  });

  test('an event for a run the ledger does not hold for the job is ignored (the slot stays)', async () => {
    // Prepare: a run reference that points at g1, but g1 runs another execution
    const world = makeDeps();
    await start(world, 'g1');
    await world.ledger.recordRun({ kind: 'glue', executionId: 'jr_stray', jobId: 'g1', pool: 'default' }, T0);
    // Act
    const result = await world.completeRun.complete({ kind: 'glue', executionId: 'jr_stray', outcome: 'failed', name: 'x' });
    // Assess
    expect(result).toBe(CompletionResult.Ignored);
    expect(world.ledger.peek('g1')!.state).toBe('running');
    expect(world.leases.poolView('default')!.holders).toHaveProperty('g1');
    expect(world.log.messages('warn')).toContain('completion does not match the job ledger, ignored');
    expect(world.metrics.get(MetricName.IgnoredEvents)).toBe(1);
  });

  test('the event arrives before the acquirer recorded "running": the job ends, the slot is freed, nothing undone', async () => {
    // Prepare: the completion is handled in the gap between recording the run and the move to running
    const world = makeDeps();
    const move = world.ledger.move.bind(world.ledger);
    world.ledger.move = async (change, now) => {
      if (change.to === 'running' && change.patch?.executionId) {
        world.ledger.move = move;
        await world.ledger.findRun('glue', change.patch.executionId); // the run reference is written alongside
        await world.completeRun.complete(world.starters.glue.finish(change.patch.executionId, 'succeeded'));
      }
      return move(change, now);
    };
    // Act
    const result = await world.acquirer.process(messageOf(glueJob('g1')));
    // Assess
    expect(result).toBe(AcquireResult.Started);
    expect(world.ledger.peek('g1')).toMatchObject({ state: 'succeeded', executionId: 'glue-run-1' });
    expect(world.leases.poolView('default')).toEqual(expect.objectContaining({ inUse: 0, holders: {} }));
    expect(world.log.entries.find((e) => e.message === 'job started')!.extra).toMatchObject({ recorded: false });
  });

  test('the event arrives before the acquirer recorded the run: noted, then the acquirer finishes the run and hands off', async () => {
    // Prepare: limit 1, w1 waits; g1's run ends the moment it starts, and its event is handled before recordRun
    const world = makeDeps({ settings: { pools: { default: 1 } } });
    const recordRun = world.ledger.recordRun.bind(world.ledger);
    const results: CompletionResult[] = [];
    world.ledger.recordRun = async (ref, now) => {
      world.ledger.recordRun = recordRun;
      results.push(await world.completeRun.complete(world.starters.glue.finish(ref.executionId, 'failed')));
      return recordRun(ref, now);
    };
    world.clock.advance(1);
    // Act
    expect(await world.acquirer.process(messageOf(glueJob('g1')))).toBe(AcquireResult.Started);
    // Assess: the event was noted, not dropped; the acquirer completed the run as the event would have
    expect(results).toEqual([CompletionResult.Noted]);
    expect(world.ledger.peek('g1')).toMatchObject({ state: 'failed', executionId: 'glue-run-1' });
    expect(world.leases.poolView('default')).toEqual(expect.objectContaining({ inUse: 0, holders: {} }));
    expect(world.starters.glue.runsOf('g1')).toHaveLength(1);
  });

  test('an acquirer that died between start and record: the event is noted, and the resumed start finishes the run', async () => {
    // Prepare: limit 1; the acquirer dies right after StartJobRun; the run's event arrives while nobody recorded it
    const world = makeDeps({ settings: { pools: { default: 1 } } });
    const crash = new CrashSwitch();
    crash.armOn('ledger.recordRun', { when: 'before' });
    const dying = { ...world, deps: { ...world.deps, ledger: crashable(world.ledger, crash, 'ledger') } };
    await expect(new Acquirer(dying.deps).process(messageOf(glueJob('g1')))).rejects.toThrow(SimulatedCrash);
    const [run] = world.starters.glue.runsOf('g1');
    expect(await world.completeRun.complete(world.starters.glue.finish(run!.executionId, 'succeeded'))).toBe(CompletionResult.Noted);
    expect(world.leases.poolView('default')!.holders).toHaveProperty('g1');
    // Act: SQS delivers the message again after the start grace; the acquirer resumes the start and finds the run
    world.clock.advance(world.deps.settings.startGraceMs + 1);
    expect(await world.acquirer.process(messageOf(glueJob('g1')))).toBe(AcquireResult.Started);
    // Assess: one run, finished, slot free
    expect(world.starters.glue.runsOf('g1')).toHaveLength(1);
    expect(world.ledger.peek('g1')).toMatchObject({ state: 'succeeded', executionId: run!.executionId });
    expect(world.leases.poolView('default')).toEqual(expect.objectContaining({ inUse: 0, holders: {} }));
  });

  test('every move CompleteRun asks for is one the domain allows', () => {
    for (const to of ['succeeded', 'failed'] as const)
      for (const from of ['starting', 'running'] as const) expect(canMove(from, to)).toBe(true);
  });

  test('a completion that died after its transaction, before the wake-up: the retried event changes nothing, the reconciler re-sends the wake-up', async () => {
    // Prepare
    const world = makeDeps({ settings: { pools: { default: 1 } } });
    const run = await start(world, 'r');
    await park(world, 'w1');
    const event = world.starters.glue.finish(run, 'succeeded');
    const crash = new CrashSwitch();
    crash.armOn('leases.pass', { when: 'after' });
    const dying = new CompleteRun({
      ...world.deps,
      ledger: crashable(world.ledger, crash, 'ledger'),
      leases: crashable(world.leases, crash, 'leases'),
    });
    await expect(dying.complete(event)).rejects.toThrow(SimulatedCrash);
    // the job's end and the hand-off are one transaction: both happened
    expect(world.ledger.peek('r')!.state).toBe('succeeded');
    expect(Object.keys(world.leases.poolView('default')!.holders)).toEqual(['w1']);
    expect(world.queue.sent).toEqual([]);
    // Act: EventBridge retries the event; later the reconciler runs past the reservation grace
    const result = await world.completeRun.complete(event);
    world.clock.advance(world.settings.reservationGraceMs + 1);
    const report = await world.reconciler.run();
    // Assess
    expect(result).toBe(CompletionResult.AlreadyDone);
    expect(report.drift).toEqual({ 'lost-wake-up': 1 });
    expect((await deliverSent(world)).map((d) => d.result)).toEqual([AcquireResult.Started]);
    expect(world.starters.glue.inProgress().map((r) => r.jobId)).toEqual(['w1']);
  });

  test('after the limit is lowered, a completion frees the slot without handing it on', async () => {
    // Prepare: limit 2, two running, one waiting; limit lowered to 1
    const world = makeDeps();
    const [a] = [await start(world, 'a'), await start(world, 'b')];
    await park(world, 'w1');
    await world.poolAdmin.setLimit('default', 1);
    // Act
    const result = await world.completeRun.complete(world.starters.glue.finish(a!, 'succeeded'));
    // Assess
    expect(result).toBe(CompletionResult.Released);
    expect(world.leases.poolView('default')).toEqual(expect.objectContaining({ limit: 1, inUse: 1, holders: { b: expect.anything() } }));
    expect(world.leases.allWaiters().map((w) => w.jobId)).toEqual(['w1']);
    expect(world.queue.sent).toEqual([]);
  });

  test('a stale waiter of the finishing job itself is dropped, not handed the slot', async () => {
    // Prepare: g1 runs (limit 1) but a stale waiter of g1 is left (a duplicate parked it as it was let in)
    const world = makeDeps({ settings: { pools: { default: 1 } } });
    const run = await start(world, 'g1');
    await world.leases.addWaiter({
      pool: 'default',
      jobId: 'g1',
      kind: 'glue',
      waitKey: waitKey(T0, 'g1'),
      body: JSON.stringify(glueJob('g1')),
      since: T0,
    });
    await park(world, 'w1');
    // Act
    await world.completeRun.complete(world.starters.glue.finish(run, 'succeeded'));
    // Assess
    expect(Object.keys(world.leases.poolView('default')!.holders)).toEqual(['w1']);
    expect(world.leases.allWaiters()).toEqual([]);
    expect(world.starters.glue.runsOf('g1')).toHaveLength(1);
  });

  test('an AppFlow completion frees an AppFlow slot the same way', async () => {
    const world = makeDeps();
    expect(await world.acquirer.process(messageOf(appflowJob('a1')))).toBe(AcquireResult.Started);
    const run = world.ledger.peek('a1')!.executionId!;
    expect(await world.completeRun.complete(world.starters.appflow.finish(run, 'succeeded'))).toBe(CompletionResult.Released);
    expect(world.leases.poolView('default')!.inUse).toBe(0);
  });
});
