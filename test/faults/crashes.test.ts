import { expectEveryJobRanOnce, runsOf } from '../support/invariants';
import { enqueue } from '../support/testStack';
import { waitFor } from '../support/waitFor';
import { useCrashStack } from './setup/crashStack';
import { jobsFor, simNameOf } from './workload';

/**
 * The acquirer dies mid-job (the Lambda times out, runs out of memory, is killed): its message is not deleted and
 * comes back after the visibility timeout (4 s locally); the reconciler re-sends jobs stuck in `starting` after the
 * start grace (3 s locally). The job holds its slot throughout, so the pool never over-admits, and the resumed start
 * finds the run a dead acquirer started instead of starting a second (AppFlow client token, Glue job-id argument).
 */
const POOLS = { crashacq: 2, crashstart: 2 };

const fixture = useCrashStack(POOLS);

test('a crash after the slot is taken and before the run starts: the job is resumed and runs once', async () => {
  const { stack, crashes } = fixture;
  stack.faults.crashAfterAcquire(2);
  const ids = await enqueue(
    stack,
    jobsFor('crashacq', 6, () => 400),
  );

  await expectEveryJobRanOnce(stack, { pool: 'crashacq', limit: POOLS.crashacq, ids, timeoutMs: 90_000 });

  // Both crashes happened (before any start call: one successful call per job).
  expect(crashes()).toBe(2);
  const calls = stack.simulator.startCalls().filter((c) => c.name.startsWith('crashacq--'));
  expect(calls.filter((c) => c.ok)).toHaveLength(6);
}, 120_000);

test('a crash after the run started and before it was recorded: the resumed start finds that run, no second one', async () => {
  const { stack, crashes } = fixture;
  // The first AppFlow job and the first Glue job crash after their start call. Their runs outlast the recovery, so
  // their completion events find the run recorded; short runs are in crashes.slow.test.ts.
  stack.faults.crashAfterStart(2);
  const first = jobsFor('crashstart', 2, () => 6_000);
  await enqueue(stack, first);
  const firstIds = first.map((s) => s.id);
  await waitFor('both first runs to have started', () => runsOf(stack, firstIds).size === 2, 30_000, 10);
  const rest = jobsFor('crashstart', 4, () => 300, 2);
  await enqueue(stack, rest);

  const ids = [...first, ...rest].map((s) => s.id);
  await expectEveryJobRanOnce(stack, { pool: 'crashstart', limit: POOLS.crashstart, ids, timeoutMs: 90_000 });

  // Each crashed job's start was asked for again and answered with the first run (no second run, see above).
  expect(crashes()).toBe(2);
  const calls = stack.simulator.startCalls().filter((c) => c.name.startsWith('crashstart--'));
  for (const spec of first) {
    const mine = calls.filter((c) => c.name === simNameOf(spec));
    if (spec.kind === 'appflow') expect(mine.map((c) => c.idempotentReplay ?? false)).toEqual([false, true]);
    else expect(mine).toHaveLength(1); // Glue: the resumed start found the run by its job-id argument and made no call
  }
}, 120_000);
