import type { LocalStack } from '../../local/stack';
import type { CallMessage } from '../../local/workers/messages';
import { startPoolStack } from '../support/poolStack';
import { DynamoLeaseStore } from '../../shared/adapters/dynamodb/leaseStore';
import { holdBusEvents } from '../support/probes';
import { enqueue, poolItem, runsPerJob, testClients, waitForJobsDone } from '../support/testStack';
import { waitFor } from '../support/waitFor';
import { slotChangeOf } from '../../bench/tracer';

/**
 * The local stack with its functions in worker threads (functionWorkers: how the bench runs them, issue 13): the same
 * handlers, bundled as the deployment bundles them, each function in threads of its own. The guarantees hold, and
 * every AWS call a function makes in a thread reaches the stack's request count and the listener.
 */
const POOLS = { threads: 3 };

let stack: LocalStack;
const calls: CallMessage[] = [];
beforeAll(async () => {
  stack = await startPoolStack(POOLS, { functionWorkers: 2, onWorkerCall: (call) => calls.push(call) });
}, 60_000);
afterAll(() => stack?.stop());

test('runs each function in threads of its own: two for those with an event source, one for the others', () => {
  expect(stack.functionThreads).toEqual({ acquirer: 2, releaser: 2, callbacks: 2, jobSets: 1, reconciler: 1 });
});

test('30 jobs through a pool of 3, each once, never more than 3 at once, sent twice over', async () => {
  const specs = Array.from({ length: 30 }, (_, i) =>
    i % 2 === 0
      ? { kind: 'glue', pool: 'threads', id: `threads-${i}`, jobName: `threads--threads-${i}--${60 + ((i * 13) % 90)}ms` }
      : { kind: 'appflow', pool: 'threads', id: `threads-${i}`, flowName: `threads--threads-${i}--${60 + ((i * 13) % 90)}ms` },
  );
  const before = stack.requests.snapshot()['dynamodb.TransactWriteItems'] ?? 0;
  // The pool fills, and jobs wait, whatever this machine's speed (runs of 60-150 ms need not overlap on a busy one):
  // the runs' completion events are held back on the bus until all 3 slots are taken and a job waits.
  const hold = holdBusEvents(stack, () => true);
  let ids: string[];
  try {
    ids = await enqueue(stack, [...specs, ...specs]);
    const leases = new DynamoLeaseStore(testClients(stack).doc, stack.tableName);
    await waitFor(
      'the pool full and a job waiting',
      async () => (await poolItem(stack, 'threads'))?.inUse === 3 && (await leases.countWaiters('threads')) > 0,
      60_000,
    );
  } finally {
    hold.release();
  }

  const states = await waitForJobsDone(stack, [...new Set(ids)], 60_000);

  expect(Object.values(states).every((s) => s === 'succeeded')).toBe(true);
  const perJob = runsPerJob(stack);
  expect(specs.map((s) => perJob.get(s.id))).toEqual(specs.map(() => 1));
  expect(stack.simulator.maxObservedConcurrency('threads')).toBeLessThanOrEqual(3);
  // The threads' calls are counted by the stack (a slot change is a transaction: at least one per job)...
  expect((stack.requests.snapshot()['dynamodb.TransactWriteItems'] ?? 0) - before).toBeGreaterThanOrEqual(30);
  // ...and given whole to the listener: the releaser's pass to a waiting job, with both jobs' keys, as the bench pairs
  // hand-offs (the bench tracer's reading of a transaction).
  const passes = calls.filter((call) => call.op === 'TransactWriteItems' && call.ok && slotChangeOf(call.input as never).change === 'pass');
  expect(passes.length).toBeGreaterThan(0);
  expect(calls.filter((call) => call.service === 'glue' && call.op === 'StartJobRun' && call.ok)).toHaveLength(15);
}, 150_000);

test('an invocation in a thread past its timeout is abandoned there too: its AWS calls are refused in the thread', async () => {
  const before = calls.length;
  // The reconciler's next run times out at once: the thread's own deadline fences it (as the stack's word does).
  stack.lambda.faults.timeOutNext('reconciler', 1);
  await expect(stack.reconcileNow()).rejects.toThrow('Task timed out');
  const refused = await waitFor('a call of the abandoned run refused in its thread', () => {
    const found = calls.slice(before).filter((call) => call.failure?.name === 'InvocationAbandonedError');
    return found.length > 0 ? found : undefined;
  });
  expect(refused.every((call) => !call.ok)).toBe(true);
  // the next run is not fenced
  await expect(stack.reconcileNow()).resolves.toMatchObject({ pools: expect.any(Number) });
}, 30_000);

test("the stack's own fault hooks need the functions in its thread, and say so", () => {
  expect(() => stack.faults.crashAfterAcquire(1)).toThrow(/functionWorkers/);
});
