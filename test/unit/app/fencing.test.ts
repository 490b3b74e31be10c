import { AcquireResult, Acquirer, type InboundMessage } from '../../../shared/app/acquireJob';
import type { SluiceDeps } from '../../../shared/app/deps';
import { appflowJob, deliverSent, type FakeWorld, glueJob, makeQueueDeps as makeDeps, messageOf } from '../../support/fakes';
import { mapKinds } from '../../support/fakes/everyKind';
import type { JobSpec } from '../../../shared/kinds/registry';

/**
 * The defects an adversarial review found at 9774b99 (issue 8), one regression test each. Each interleaving is forced
 * with a gate: a second copy of a job reads, then waits at its next port call while the first copy acts, then goes on
 * with what it read. The assertions read the fake job API's own record (runs in progress), not Sluice's stores.
 */

/** A promise and its resolver. */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/**
 * An acquirer on the world's stores whose `pauseBefore`-th port call (1-based, counting every store, queue and
 * starter call) waits until `release` is called. `paused` resolves when it reaches that call.
 */
function gatedAcquirer(world: FakeWorld, pauseBefore: number): { acquirer: Acquirer; paused: Promise<void>; release: () => void } {
  const reached = deferred();
  const gate = deferred();
  let calls = 0;
  const gated = <T extends object>(port: T): T =>
    new Proxy(port, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver) as unknown;
        if (typeof value !== 'function') return value;
        return async (...args: unknown[]) => {
          if (++calls === pauseBefore) {
            reached.resolve();
            await gate.promise;
          }
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
  const deps: SluiceDeps = {
    ...world.deps,
    leases: gated(world.deps.leases),
    ledger: gated(world.deps.ledger),
    queue: gated(world.deps.queue),
    starters: mapKinds(world.deps.starters, (starter) => gated(starter)),
  };
  return { acquirer: new Acquirer(deps), paused: reached.promise, release: gate.resolve };
}

/** Copy B reads the job, then waits while copy A is processed to the end; then B goes on. Returns both results. */
async function staleCopyRace(world: FakeWorld, spec: object): Promise<[AcquireResult, AcquireResult]> {
  // The job is known already (an earlier delivery registered it): a first delivery's record is created by its first
  // write, so a copy can only hold a stale read of a record that existed before it. B's first call (a take creating
  // the record) fails, its second reads the record; it waits before its third.
  await world.ledger.register(spec as JobSpec, world.clock.now());
  const b = gatedAcquirer(world, 3);
  const copyB = b.acquirer.process(messageOf(JSON.stringify(spec)));
  await b.paused;
  const resultA = await world.acquirer.process(messageOf(JSON.stringify(spec)));
  b.release();
  return [resultA, await copyB];
}

/** Runs in progress per pool never exceed `limit` (the fake job API's own count). */
function expectWithinLimit(world: FakeWorld, pool: string, limit: number): void {
  const running = [...world.starters.appflow.inProgress(pool), ...world.starters.glue.inProgress(pool)];
  expect(running.length).toBeLessThanOrEqual(limit);
}

const oneSlot = { settings: { pools: { default: 1 } } };

describe('fencing: a decision taken on a read is applied only if nothing changed since (issue 8)', () => {
  test('defect 1: a copy that saw the slot held by another attempt cannot start a run after that attempt gave the slot back', async () => {
    // A takes the slot and stops before its next call; copy B reads the job (before the fix: and finds the slot
    // "already held") and stops before its next write; A goes on: its start is throttled, so it frees the slot and
    // schedules a retry; then B goes on with what it read.
    const world = makeDeps(oneSlot);
    await world.leases.createPool('default', 1);
    // A: its take (creating the record) is its first call, the start its second. B: its take fails (A created the
    // record), its read is its second call.
    const a = gatedAcquirer(world, 2);
    const b = gatedAcquirer(world, 3);
    const copyA = a.acquirer.process(messageOf(glueJob('j1')));
    await Promise.race([a.paused, copyA]);
    const copyB = b.acquirer.process(messageOf(glueJob('j1')));
    await Promise.race([b.paused, copyB]);
    world.starters.glue.failNextStarts(1, 'transient');
    a.release();
    expect(await copyA).toBe(AcquireResult.RetryScheduled);
    b.release();
    await copyB;
    // Whatever B did, a newcomer must not make two runs in a pool of 1.
    await world.acquirer.process(messageOf(glueJob('n1')));
    expectWithinLimit(world, 'default', 1);
    await deliverSent(world);
    expectWithinLimit(world, 'default', 1);
    expect(world.starters.glue.runsOf('j1').length).toBeLessThanOrEqual(1);
  });

  test('defect 6: a copy that read the job before another attempt lost a start answer does not start a second Glue run', async () => {
    // A's start creates run 1 but its answer is lost (a 5xx): the job keeps its slot and a run may exist. B read
    // the job before A asked for the start (startRequested unset), then goes on.
    const world = makeDeps(oneSlot);
    world.starters.glue.loseNextStartAnswers(1);
    await staleCopyRace(world, glueJob('j1'));
    await deliverSent(world); // A's retry
    expect(world.starters.glue.runsOf('j1')).toHaveLength(1);
    expectWithinLimit(world, 'default', 1);
  });

  test('defect 7: a stale copy does not free the slot a given-up job keeps for a run of unknown outcome', async () => {
    // A's only start loses its answer and no retry is allowed: the job is given up, keeping its slot while its run
    // may go on. B had read the job before; a newcomer arrives after.
    const world = makeDeps({
      settings: { pools: { default: 1 }, backoff: { baseSeconds: 1, maxSeconds: 1, retryForSeconds: 0, maxAttempts: 1 } as never },
    });
    world.starters.glue.loseNextStartAnswers(1);
    const [a] = await staleCopyRace(world, glueJob('j1'));
    expect(a).toBe(AcquireResult.DeadLettered);
    await world.acquirer.process(messageOf(glueJob('n1')));
    await deliverSent(world);
    expect(world.starters.glue.inProgress().map((run) => run.jobId)).toEqual(['j1']);
  });

  test('defect 8: a reservation made before the limit was lowered does not start over the new limit', async () => {
    // limit 1: a runs, w1 waits; a ends, so w1 is handed the slot and its wake-up is on its way; the pool is paused.
    const world = makeDeps(oneSlot);
    expect(await world.acquirer.process(messageOf(glueJob('a')))).toBe(AcquireResult.Started);
    expect(await world.acquirer.process(messageOf(glueJob('w1')))).toBe(AcquireResult.Waiting);
    const [run] = world.starters.glue.inProgress();
    await world.completeRun.complete(world.starters.glue.finish(run!.executionId, 'succeeded'));
    await world.leases.setLimit('default', 0);
    await deliverSent(world);
    expect(world.starters.glue.inProgress()).toEqual([]);
  });
});

describe('start failures (issue 8, defects 3 and 4)', () => {
  // Defect 3 itself was the classification of a 5xx as a refusal: pinned in test/unit/adapters/startErrors.test.ts.
  test('defect 3, the service side: a start answered with a 5xx keeps its slot and its retry finds the run', async () => {
    const world = makeDeps(oneSlot);
    world.starters.glue.loseNextStartAnswers(1, 'InternalServiceException');
    expect(await world.acquirer.process(messageOf(glueJob('j1')))).toBe(AcquireResult.RetryScheduled);
    // While the retry waits, a newcomer must not start: the run of j1 may be going (it is).
    await world.acquirer.process(messageOf(glueJob('n1')));
    expectWithinLimit(world, 'default', 1);
    await deliverSent(world);
    expect(world.starters.glue.runsOf('j1')).toHaveLength(1);
    expectWithinLimit(world, 'default', 1);
  });

  test('defect 4: steady throttling (a Glue job at its own concurrent-runs limit) keeps the job waiting for hours, not dead-lettered', async () => {
    const world = makeDeps({ settings: { backoff: { baseSeconds: 2, maxSeconds: 900, retryForSeconds: 6 * 3600 } } });
    // Refused for two hours (every start the retries make in that time), then accepted.
    const refuseUntil = world.clock.now() + 2 * 3600_000;
    world.starters.glue.onStart = async () => {
      if (world.clock.now() < refuseUntil) world.starters.glue.failNextStarts(1, 'transient', 'ConcurrentRunsExceededException');
    };
    await world.acquirer.process(messageOf(glueJob('j1')));
    await deliverSent(world);
    expect(world.queue.deadLettered).toEqual([]);
    expect(world.starters.glue.runsOf('j1')).toHaveLength(1);
    // and it waited cheaply: 10 tries while the delay grows to its cap (2, 4, ... 512 s), then at most one per 450 s
    expect(world.starters.glue.startCalls.length).toBeLessThanOrEqual(10 + 2 * (3600 / 450) + 1);
  });
});

describe('the reconciler (issue 8, defect 5)', () => {
  test('defect 5: a run whose job was deleted (the API no longer knows it) gives its slot back; a failure to ask never does', async () => {
    const world = makeDeps(oneSlot);
    expect(await world.acquirer.process(messageOf(glueJob('j1')))).toBe(AcquireResult.Started);
    const run = world.ledger.peek('j1')!.executionId!;
    // A status call that fails (throttled, say) is no answer: past the maximum run time the slot is still held.
    const status = jest.spyOn(world.starters.glue, 'status').mockRejectedValue(Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' }));
    world.clock.advance(world.settings.maxRunMs.glue + 1);
    await world.reconciler.run();
    expect(world.ledger.peek('j1')!.state).toBe('running');
    expect(await world.acquirer.process(messageOf(glueJob('n1')))).toBe(AcquireResult.Waiting);
    // The job deleted: the API answers that the run does not exist; nothing will ever end it, so its slot comes back.
    status.mockRestore();
    world.starters.glue.forgetRun(run);
    await world.reconciler.run();
    expect(world.ledger.peek('j1')!.state).toBe('failed');
    expect(world.ledger.peek('n1')!.state).not.toBe('waiting');
  });
});

describe('specs SQS cannot carry (issue 8, defect 2)', () => {
  test.each([
    ['U+FFFF', '\uffff'],
    ['U+FFFE', '\ufffe'],
  ])('a Glue argument with %s is dead-lettered at once with its reason, and the jobs behind it run', async (_name, char) => {
    const world = makeDeps(oneSlot);
    expect(await world.acquirer.process(messageOf(glueJob('a')))).toBe(AcquireResult.Started);
    const bad = JSON.stringify(glueJob('bad', 'default', 'glue-bad', { '--day': `2026-11-22${char}` })).replace(
      char,
      `\\u${char.charCodeAt(0).toString(16)}`,
    );
    expect(await world.acquirer.process(messageOf(bad))).toBe(AcquireResult.DeadLettered);
    expect(world.queue.deadLettered.map((d) => d.reason)).toEqual([expect.stringContaining('--day')]);
    expect(await world.acquirer.process(messageOf(appflowJob('behind')))).toBe(AcquireResult.Waiting);
    const [run] = world.starters.glue.inProgress();
    await world.completeRun.complete(world.starters.glue.finish(run!.executionId, 'succeeded'));
    await deliverSent(world);
    expect(world.starters.appflow.inProgress().map((r) => r.jobId)).toEqual(['behind']);
  });
});

// For the reader: InboundMessage is what the SQS handler builds; kept typed here so the gate sees every call.
export type { InboundMessage };
