import type { LocalStack } from '../../local/stack';
import type { SimRun } from '../../local/simulators';
import { jobIdOfRun } from '../../local/simulators/simulatedKinds';
import { container } from '../../shared/runtime/container';
import { deadLettered, expectEveryJobRanOnce, jobRecord, runsOf } from '../support/invariants';
import { holdCompletions, pauseReconciler, scanTable, setMaxReceiveCount, watchDeliveries, withVisibilityTimeout } from '../support/probes';
import { startPoolStack } from '../support/poolStack';
import { enqueue, jobState, queueDepth, waitForJobsDone } from '../support/testStack';
import { waitFor } from '../support/waitFor';

/**
 * A job's life through the whole local stack: waiting, pool limits changed at run time, start failures. Each test has
 * its own pools; names start with "<pool>--" so the simulator counts runs per pool, and "--<n>ms" sets a duration.
 */
const POOLS = { wait1: 1, lower: 4, raise: 1, indepA: 1, indepB: 3, throttle: 1, permfail: 1 };

let stack: LocalStack;
beforeAll(async () => {
  stack = await startPoolStack(POOLS, { defaultRunMs: 150 });
}, 60_000);
afterAll(() => stack?.stop());
afterEach(() => stack.simulator.clearFaults());

function jobs(pool: string, count: number, durationMs: (i: number) => number, kinds: 'mixed' | 'appflow' = 'mixed') {
  return Array.from({ length: count }, (_, i) =>
    kinds === 'mixed' && i % 3 === 2
      ? { kind: 'glue', pool, id: `${pool}-${i}`, jobName: `${pool}--${i}--${durationMs(i)}ms` }
      : { kind: 'appflow', pool, id: `${pool}-${i}`, flowName: `${pool}--${i}--${durationMs(i)}ms` },
  );
}

const runsOfPool = (pool: string) =>
  stack.simulator
    .runs()
    .filter((r) => r.group === pool)
    .sort((a, b) => a.startSeq - b.startSeq);

/** The pool as `sluice pools` shows it: its limit, slots in use and jobs waiting. */
const poolView = async (pool: string) => (await container().poolAdmin.list()).find((p) => p.name === pool);
const matches = (view: { inUse: number; waiting: number } | undefined, want: { inUse: number; waiting: number }) =>
  view?.inUse === want.inUse && view.waiting === want.waiting;

/** Runs of the pool in progress just before `run` began, by the simulator's own order of starts and ends. */
const inProgressAt = (pool: string, run: SimRun) =>
  runsOfPool(pool).filter((r) => r !== run && r.startSeq < run.startSeq && (r.endSeq === undefined || r.endSeq > run.startSeq)).length;

test('waiting loses nothing: 12 jobs through a pool of 1 with maxReceiveCount 1, none dead-lettered', async () => {
  // A design that returns waiting jobs to the queue would see them received again and moved to the DLQ here. (With a
  // visibility timeout longer than a batch can take on a busy machine: a slow batch is not a job returned.)
  await setMaxReceiveCount(stack, 1);
  try {
    await withVisibilityTimeout(stack, 60, async () => {
      const ids = await enqueue(
        stack,
        jobs('wait1', 12, (i) => 100 + (i % 4) * 40),
      );

      await expectEveryJobRanOnce(stack, { pool: 'wait1', limit: 1, ids, timeoutMs: 90_000 });

      expect(await queueDepth(stack, stack.deadLetterUrl)).toBe(0);
    });
  } finally {
    await setMaxReceiveCount(stack, 5);
  }
}, 120_000);

describe('pool limits changed at run time', () => {
  test('lowering a limit never touches running jobs and starts nothing new until fewer run than the new limit', async () => {
    // Four jobs hold the pool's four slots when the limit falls, however long starting them takes on this machine: their
    // runs' completions are held back at the releaser (and the reconciler paused) until the limit is lowered.
    const resume = pauseReconciler();
    const hold = holdCompletions((c) => c.name.startsWith('lower--'));
    let ids: string[];
    let running: SimRun[];
    try {
      ids = await enqueue(
        stack,
        jobs('lower', 8, (i) => 700 + i * 150),
      );
      await waitFor('the pool full: four slots taken, four jobs waiting', async () =>
        matches(await poolView('lower'), { inUse: 4, waiting: 4 }),
      );
      running = runsOfPool('lower');
      expect(running).toHaveLength(4);

      await container().poolAdmin.setLimit('lower', 2);
    } finally {
      hold.release();
      resume();
    }

    await expectEveryJobRanOnce(stack, { pool: 'lower', limit: 4, ids });
    // The four runs in progress when the limit fell went on to their planned end: none was stopped or cut short.
    for (const run of running) {
      const after = stack.simulator.runs().find((r) => r.executionId === run.executionId)!;
      expect(after.outcome).toBe('succeeded');
      expect(after.endedAt! - after.startedAt).toBeGreaterThanOrEqual(Number(/--(\d+)ms/.exec(after.name)![1]) - 5);
    }
    // Every later start found fewer runs in progress than the new limit, so the first came only after three ended...
    const later = runsOfPool('lower').filter((r) => !running.some((x) => x.executionId === r.executionId));
    expect(later).toHaveLength(4);
    expect(Math.max(...later.map((r) => inProgressAt('lower', r)))).toBeLessThanOrEqual(1);
    const thirdEnd = running
      .map((r) => stack.simulator.runs().find((x) => x.executionId === r.executionId)!.endSeq!)
      .sort((a, b) => a - b)[2]!;
    expect(later[0]!.startSeq).toBeGreaterThan(thirdEnd);
    expect(
      stack.simulator
        .concurrencyTimeline('lower')
        .filter((p) => p.t >= later[0]!.startedAt)
        .every((p) => p.inProgress <= 2),
    ).toBe(true);
    // ...and, as Sluice counts slots, only after three of the four jobs had given theirs back (their ledger end).
    const released = (await Promise.all(running.map((r) => jobRecord(stack, jobIdOfRun(r)!))))
      .map((r) => r!.endedAt!)
      .sort((a, b) => a - b);
    expect(later[0]!.startCallAt).toBeGreaterThanOrEqual(released[2]!);
  }, 90_000);

  test('raising a limit lets waiting jobs in at once, without waiting for a run to end or the reconciler', async () => {
    // The first job keeps its slot until the test says (its completion held back at the releaser, the reconciler
    // paused): only the raise can let the others in.
    const resume = pauseReconciler();
    const hold = holdCompletions((c) => c.name.startsWith('raise--'));
    try {
      const ids = await enqueue(
        stack,
        jobs('raise', 5, () => 2500, 'appflow'),
      );
      await waitFor('the pool full: one slot taken, four jobs waiting', async () =>
        matches(await poolView('raise'), { inUse: 1, waiting: 4 }),
      );
      const [first] = runsOfPool('raise');

      const raisedAt = Date.now();
      await container().poolAdmin.setLimit('raise', 4);
      await waitFor('three more runs to start', () => runsOfPool('raise').length === 4, 30_000);

      // Three more runs began after the raise, while the first job still held its slot: only the raise let them in.
      const started = runsOfPool('raise').filter((r) => r.executionId !== first!.executionId);
      expect(started).toHaveLength(3);
      for (const run of started) expect(run.startCallAt).toBeGreaterThanOrEqual(raisedAt);
      expect(await jobState(stack, jobIdOfRun(first!)!)).toBe('running');
      hold.release();
      resume();
      await expectEveryJobRanOnce(stack, { pool: 'raise', limit: 4, ids });
    } finally {
      hold.release();
      resume();
    }
  }, 90_000);

  test('two pools are independent: a full pool does not hold back another', async () => {
    // Each pool is kept full for as long as the test says, not for as long as a run happens to take on this machine:
    // the releaser holds back the completions of the runs picked (as late events would be) and the reconciler, which
    // would find those runs ended through the job API, waits for the test.
    const resume = pauseReconciler();
    const holdA = holdCompletions((c) => c.name.startsWith('indepA--'));
    const holdB = holdCompletions((c) => c.name.startsWith('indepB--'));
    try {
      const slow = jobs('indepA', 3, () => 150);
      const fast = jobs('indepB', 6, () => 150);
      const slowIds = await enqueue(stack, slow);
      await waitFor('pool A full: one slot taken, two jobs waiting', async () =>
        matches(await poolView('indepA'), { inUse: 1, waiting: 2 }),
      );
      const fastIds = await enqueue(stack, fast);

      // B takes its whole limit while A is full...
      await waitFor('pool B full: three slots taken, three jobs waiting', async () =>
        matches(await poolView('indepB'), { inUse: 3, waiting: 3 }),
      );
      expect(await poolView('indepA')).toMatchObject({ inUse: 1, waiting: 2 });
      // ...and, its runs' completions let through, runs every job while A's one slot is still taken and its two jobs wait.
      holdB.release();
      expect(Object.values(await waitForJobsDone(stack, fastIds))).toEqual(fastIds.map(() => 'succeeded'));
      expect(runsOfPool('indepA')).toHaveLength(1);
      expect(await poolView('indepA')).toMatchObject({ inUse: 1, waiting: 2 });

      // A then runs its jobs in turn; each job of both pools ran once, within its pool's limit.
      holdA.release();
      resume();
      await expectEveryJobRanOnce(stack, { pool: 'indepA', limit: 1, ids: slowIds });
      await expectEveryJobRanOnce(stack, { pool: 'indepB', limit: 3, ids: fastIds });
      expect(stack.simulator.maxObservedConcurrency('indepA')).toBe(1);
    } finally {
      holdA.release();
      holdB.release();
      resume();
    }
  }, 90_000);
});

describe('start failures', () => {
  test('throttled starts free the slot and are retried later, until each job runs once', async () => {
    // Without the reconciler, only the acquirer's own hand-off can pass the slot on.
    const resume = pauseReconciler();
    try {
      stack.simulator.setFaults({ appflow: { throttleStarts: 3 } });
      const ids = await enqueue(
        stack,
        jobs('throttle', 3, () => 300, 'appflow'),
      );

      await waitForJobsDone(stack, ids, 90_000);
      resume();
      await expectEveryJobRanOnce(stack, { pool: 'throttle', limit: 1, ids });

      const calls = stack.simulator.startCalls().filter((c) => c.name.startsWith('throttle--'));
      const throttled = calls.filter((c) => c.error === 'ThrottlingException');
      expect(throttled).toHaveLength(3);
      // The first throttled job gave its slot up: the next start call was for another job, not a retry of it.
      expect(calls[1]!.clientToken).not.toBe(calls[0]!.clientToken);
      // Each throttled job tried again only after a backoff of at least RETRY_BASE_SECONDS (1 s locally).
      for (const call of throttled) {
        const next = calls.find((c) => c.clientToken === call.clientToken && c.at > call.at)!;
        expect(next.at - call.at).toBeGreaterThanOrEqual(950);
      }
      for (const id of ids) {
        const record = await jobRecord(stack, id);
        const throttles = throttled.filter((c) => c.clientToken === `sluice-${id}`).length;
        expect(record?.attempts).toBe(throttles + 1);
      }
    } finally {
      resume();
    }
  }, 120_000);

  test(
    'a permanent start error dead-letters the job with its reason and frees the slot for the next job',
    () =>
      withVisibilityTimeout(stack, 60, async () => {
        const resume = pauseReconciler();
        const receives = watchDeliveries();
        try {
          stack.simulator.setFaults({
            appflow: { failStarts: { count: 1, error: 'ResourceNotFoundException', message: 'Flow does not exist' } },
          });
          const ids = await enqueue(
            stack,
            jobs('permfail', 2, () => 300, 'appflow'),
          );

          const states = await waitForJobsDone(stack, ids, 90_000);

          const calls = stack.simulator.startCalls().filter((c) => c.name.startsWith('permfail--'));
          const failedId = calls[0]!.clientToken!.replace(/^sluice-/, '');
          const otherId = ids.find((id) => id !== failedId)!;
          expect(calls[0]!.error).toBe('ResourceNotFoundException');
          expect(states).toEqual({ [failedId]: 'dead', [otherId]: 'succeeded' });
          // The slot went straight to the other job: no waiting for a safety net. The reconciler is paused, and no message
          // came back after its visibility timeout (each was received once), so only the failed start's release let it in.
          const next = calls.find((c) => c.clientToken === `sluice-${otherId}`)!;
          expect(next.ok).toBe(true);
          expect(next.at).toBeGreaterThanOrEqual(calls[0]!.respondedAt);
          expect(receives.counts().filter((count) => count !== 1)).toEqual([]);
          expect(runsOf(stack, [failedId]).get(failedId)).toBeUndefined();
          expect(
            await waitFor('the dead letter', async () => ((await deadLettered(stack, [failedId])) as Array<{ reason: string }>)[0]),
          ).toEqual({
            jobId: failedId,
            reason: expect.stringMatching(/ResourceNotFoundException/),
          });
          resume();
          await expectEveryJobRanOnce(stack, { pool: 'permfail', limit: 1, ids: [otherId] });
        } finally {
          receives.stop();
          resume();
        }
      }),
    120_000,
  );

  test('a job for an unknown pool goes to the dead-letter queue with its reason, and runs nowhere', async () => {
    const [id] = await enqueue(stack, [{ kind: 'appflow', pool: 'nowhere', id: 'nowhere-1', flowName: 'nowhere--x' }]);

    const dead = await waitFor('the dead letter', async () => (await deadLettered(stack, [id!]))[0], 30_000);

    expect(dead.reason).toMatch(/unknown pool 'nowhere'/);
    expect(await jobState(stack, id!)).toBe('dead');
    expect(stack.simulator.startCalls().filter((c) => c.name.startsWith('nowhere--'))).toEqual([]);
    expect((await scanTable(stack)).filter((item) => String(item.pk).startsWith('POOL#nowhere'))).toEqual([]);
  }, 60_000);
});
