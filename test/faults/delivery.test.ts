import type { LocalStack } from '../../local/stack';
import { expectEveryJobRanOnce, runsOf } from '../support/invariants';
import { sendRaw, watchDeliveries } from '../support/probes';
import { enqueue, poolItem, queueDepth } from '../support/testStack';
import { waitFor } from '../support/waitFor';
import { KINDS } from '../../shared/kinds/registry';
import { jobsFor, startFaultStack } from './workload';

/**
 * SQS delivers at least once and producers send twice; the job APIs throttle. Neither may run a job twice, run more
 * than the limit, or leave a slot behind.
 */
const POOLS = { redeliver: 2, throttled: 3 };

let stack: LocalStack;
beforeAll(async () => {
  stack = await startFaultStack(POOLS);
}, 60_000);
afterAll(() => stack?.stop());
afterEach(() => stack.simulator.clearFaults());

test('the same job delivered again and again, at every stage of its life, runs once', async () => {
  const specs = jobsFor('redeliver', 8, () => 500);
  const ids = specs.map((s) => s.id);

  // Three copies of each at once (concurrent acquirers race for the same job)...
  await enqueue(stack, [...specs, ...specs, ...specs]);
  // ...more once two have started and the rest wait (parked jobs and running jobs see a copy)...
  await waitFor('two jobs to have started', () => runsOf(stack, ids).size >= 2, 60_000, 10);
  await enqueue(stack, specs);
  // ...and more while the wake-ups of let-in jobs are on their way.
  await waitFor('five jobs to have started', () => runsOf(stack, ids).size >= 5, 60_000, 10);
  await enqueue(stack, specs);

  await expectEveryJobRanOnce(stack, { pool: 'redeliver', limit: POOLS.redeliver, ids });

  // Finished jobs delivered once more: nothing runs, no slot is taken, every copy is consumed.
  const runs = stack.simulator.runs().length;
  const deliveries = watchDeliveries();
  try {
    const messageIds = await Promise.all(specs.map((spec) => sendRaw(stack, JSON.stringify(spec))));
    await waitFor(
      'the late copies to be consumed',
      async () => messageIds.every((id) => deliveries.count(id) === 1) && (await queueDepth(stack, stack.queueUrl)) === 0,
      60_000,
    );
  } finally {
    deliveries.stop();
  }
  expect(stack.simulator.runs().length).toBe(runs);
  expect(await poolItem(stack, 'redeliver')).toEqual(expect.objectContaining({ inUse: 0, holders: {} }));
}, 180_000);

test('throttled starts and status calls: every job still runs once, within the limit, and no slot leaks', async () => {
  // The next 5 starts of each kind are throttled, and the reconciler's next 3 status calls of each kind.
  stack.simulator.setFaults({ throttleStarts: 5, throttleStatusCalls: 3 });
  const ids = await enqueue(
    stack,
    jobsFor('throttled', 12, (i) => 150 + (i % 3) * 100),
  );

  await expectEveryJobRanOnce(stack, { pool: 'throttled', limit: POOLS.throttled, ids });

  const throttled = stack.simulator.startCalls().filter((c) => c.name.startsWith('throttled--') && c.error === 'ThrottlingException');
  expect(throttled).toHaveLength(5 * KINDS.length); // 5 per kind (12 jobs: 4 of each, retried until the faults are used up)
}, 60_000);
