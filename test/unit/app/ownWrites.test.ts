import { AcquireResult, Acquirer } from '../../../shared/app/acquireJob';
import type { LeaseStore } from '../../../shared/ports/leaseStore';
import type { JobLedger } from '../../../shared/ports/jobLedger';
import { glueJob, makeQueueDeps as makeDeps, messageOf, type FakeWorld } from '../../support/fakes';

// A version-fenced write whose answer was lost after it applied is sent again by the SDK, and that second request
// meets the first one's effect: "condition failed", for a write that did happen (docs/protocol.md, "Answers lost after
// a write applied"). A writer must then recognise its own write on the record, not take it for a race it lost.
//
// BUG (shared/app/acquireJob.ts failed): a start refused, its release (backoff) applied but answered "condition
// failed": the delivery answered Duplicate, its message was deleted and the retry never sent: the job stayed queued
// forever with nothing on its way (found by the fault matrix with the DynamoDB fault layer). The same for giveUp (a
// dead job with no DLQ copy) and giveUpKeep.

/** The world's acquirer, but `method` of `port` applies its write and then answers as the SDK's retry of it would. */
function acquirerWithRetried(world: FakeWorld, port: 'leases' | 'ledger', method: string, times = 1): Acquirer {
  let left = times;
  const target = world.deps[port] as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
  const wrapped = new Proxy(target, {
    get(obj, prop, receiver) {
      const value = Reflect.get(obj, prop, receiver) as unknown;
      if (prop !== method || typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        if (left <= 0) return (value as (...a: unknown[]) => Promise<unknown>).apply(obj, args);
        left--;
        await (value as (...a: unknown[]) => Promise<unknown>).apply(obj, args); // applied, answer lost
        return (value as (...a: unknown[]) => Promise<unknown>).apply(obj, args); // the SDK's retry meets its effect
      };
    },
  });
  return new Acquirer({ ...world.deps, [port]: wrapped as unknown as LeaseStore & JobLedger });
}

test('a refused start whose release applied but was answered "condition failed": the retry is still sent', async () => {
  const world = makeDeps({ settings: { pools: { default: 1 } } });
  world.starters.glue.failNextStarts(1, 'transient');
  const acquirer = acquirerWithRetried(world, 'leases', 'free');
  expect(await acquirer.process(messageOf(glueJob('j1')))).toBe(AcquireResult.RetryScheduled);
  expect(world.ledger.peek('j1')).toMatchObject({ state: 'queued', attempts: 1 });
  expect(world.queue.takeSent().map((m) => [JSON.parse(m.body).id, m.delaySeconds > 0])).toEqual([['j1', true]]);
});

test('a start refused for good whose release applied but was answered "condition failed": the DLQ copy is still sent', async () => {
  const world = makeDeps({ settings: { pools: { default: 1 } } });
  world.starters.glue.failNextStarts(1, 'permanent');
  const acquirer = acquirerWithRetried(world, 'leases', 'free');
  expect(await acquirer.process(messageOf(glueJob('j1')))).toBe(AcquireResult.DeadLettered);
  expect(world.ledger.peek('j1')).toMatchObject({ state: 'dead' });
  expect(world.queue.deadLettered.map((d) => d.context.jobId)).toEqual(['j1']);
});

test('a hold whose write applied but was answered "condition failed": the retry is still sent', async () => {
  const world = makeDeps({ settings: { pools: { default: 1 } } });
  world.starters.glue.loseNextStartAnswers(1);
  const acquirer = acquirerWithRetried(world, 'ledger', 'move');
  expect(await acquirer.process(messageOf(glueJob('j1')))).toBe(AcquireResult.RetryScheduled);
  expect(world.ledger.peek('j1')).toMatchObject({ state: 'starting', attempts: 1 });
  expect(world.queue.takeSent().map((m) => JSON.parse(m.body).id)).toEqual(['j1']);
});
