import { expectEveryJobRanOnce, jobRecord, runsOf } from '../support/invariants';
import { enqueue } from '../support/testStack';
import { waitFor } from '../support/waitFor';
import { useCrashStack } from './setup/crashStack';
import { jobsFor } from './workload';

/**
 * Slower crash cases: runs that end before Sluice learns they exist, and one job crashing again and again. The local
 * settings: visibility timeout 8 s, start grace 6 s, reconcile period 2.4 s.
 */
const POOLS = { shortrun: 2, again: 1, againstart: 1 };

const fixture = useCrashStack(POOLS);

test('a crash after the start of a run shorter than the recovery: the run is found ended, its slot freed once recorded', async () => {
  const { stack, crashes } = fixture;
  // The runs end (and their events are ignored: no run is recorded yet) long before the job's message comes back.
  stack.faults.crashAfterStart(2);
  const first = jobsFor('shortrun', 2, () => 200);
  await enqueue(stack, first);
  const firstIds = first.map((s) => s.id);
  await waitFor('both first runs to have started', () => runsOf(stack, firstIds).size === 2, 10_000, 10);
  const rest = jobsFor('shortrun', 4, () => 200, 2);
  const ids = [...first, ...(await enqueue(stack, rest)).map((id) => rest.find((s) => s.id === id)!)].map((s) => s.id);

  // The guarantee holds from when Sluice recorded the run (expectEveryJobRanOnce uses the ledger's startedAt).
  await expectEveryJobRanOnce(stack, { pool: 'shortrun', limit: POOLS.shortrun, ids, timeoutMs: 40_000 });

  // And each crashed job's message came back and its resumed start found the run the crashed one made: the ledger
  // records that run (the job was not forgotten, nor started again).
  expect(crashes()).toBe(2);
  for (const spec of first) {
    const runs = runsOf(stack, [spec.id]).get(spec.id)!;
    expect(runs).toHaveLength(1);
    expect((await jobRecord(stack, spec.id))!.executionId).toBe(runs[0]!.executionId);
  }
}, 60_000);

test('one job crashing after taking its slot, four times over: it still runs once, and the next job only after it', async () => {
  const { stack, crashes } = fixture;
  stack.faults.crashAfterAcquire(4);
  const specs = [0, 1].map((i) => ({ kind: 'appflow', pool: 'again', id: `again-${i}`, flowName: `again--${i}--300ms` }));
  const [firstId] = await enqueue(stack, [specs[0]]);
  await waitFor('the first job to hold the slot', async () => (await jobRecord(stack, firstId!))?.state === 'starting', 10_000, 10);
  await enqueue(stack, [specs[1]]);

  await expectEveryJobRanOnce(stack, { pool: 'again', limit: POOLS.again, ids: specs.map((s) => s.id), timeoutMs: 50_000 });

  expect(crashes()).toBe(4);
  const [a, b] = specs.map((s) => runsOf(stack, [s.id]).get(s.id)![0]!);
  expect(b!.startSeq).toBeGreaterThan(a!.endSeq!);
}, 60_000);

test('one Glue job crashing after its start, three times over: each resumed start finds the same run', async () => {
  const { stack, crashes } = fixture;
  stack.faults.crashAfterStart(3);
  const [spec] = jobsFor('againstart', 2, () => 3_000).filter((s) => s.kind === 'glue');
  await enqueue(stack, [spec]);

  await expectEveryJobRanOnce(stack, { pool: 'againstart', limit: POOLS.againstart, ids: [spec!.id], timeoutMs: 50_000 });

  expect(crashes()).toBe(3);
  expect(stack.simulator.startCalls().filter((c) => c.name.startsWith('againstart--'))).toHaveLength(1);
}, 60_000);
