import { AcquireResult } from '../../../shared/app/acquireJob';
import { CompletionResult } from '../../../shared/app/completeRun';
import { RunOutcome } from '../../../shared/domain/job';
import { conformanceOf } from '../../../shared/kinds/kindConformance';
import { makeQueueDeps as makeDeps, messageOf, type FakeWorld } from '../../support/fakes';
import type { JobSpec } from '../../../shared/kinds/registry';

// A run that ended without ever starting (an ECS task stopped with TaskFailedToStart, RESOURCE:CPU or MEMORY: no
// capacity for it, https://docs.aws.amazon.com/AmazonECS/latest/developerguide/stopped-task-errors.html) is a refused
// start, not a failed run: the job is retried with backoff, and its next start makes a new task.
//
// BUG (shared/app/completeRun.ts): such a completion ended the job failed, a start the capacity provider merely had no
// room for yet; and a retry would have been answered with the dead task for a day (ECS keeps a client token 24 hours).

const ecsJob = (id: string): JobSpec => ({ ...(conformanceOf('ecs').spec(id, `task-${id}`) as JobSpec), pool: 'default' });

async function runningEcsJob(world: FakeWorld, id: string): Promise<string> {
  expect(await world.acquirer.process(messageOf(ecsJob(id)))).toBe(AcquireResult.Started);
  return world.ledger.peek(id)!.executionId!;
}

/** The completion the ECS kind reads from a task that never started. */
const notStarted = (world: FakeWorld, executionId: string) => ({
  ...world.starters.ecs.completionOf(executionId, RunOutcome.NotStarted),
  outcome: RunOutcome.NotStarted,
  detail: 'TaskFailedToStart: RESOURCE:MEMORY',
});

test('a run that never started: the job goes back to queued, its slot handed on, its retry sent with a backoff', async () => {
  const world = makeDeps({ settings: { pools: { default: 1 } } });
  const first = await runningEcsJob(world, 'j1');
  world.queue.takeSent();
  world.clock.advance(1000);
  // Act
  expect(await world.completeRun.complete(notStarted(world, first))).toBe(CompletionResult.Released);
  // Assess: queued, no slot, the run it replaces noted; one retry message, delayed
  expect(world.ledger.peek('j1')).toMatchObject({ state: 'queued', replacesRun: first, attempts: 2, lastError: 'TaskFailedToStart: RESOURCE:MEMORY' });
  expect(world.ledger.peek('j1')!.lease).toBeUndefined();
  expect(world.leases.peekPool('default')!.inUse).toBe(0);
  const [retry, ...more] = world.queue.takeSent();
  expect(more).toEqual([]);
  expect(retry!.delaySeconds).toBeGreaterThan(0);
  // The retry starts a new task: the start is told which run it replaces.
  world.clock.advance(retry!.delaySeconds * 1000);
  expect(await world.acquirer.process({ messageId: retry!.messageId, body: retry!.body })).toBe(AcquireResult.Started);
  const second = world.ledger.peek('j1')!.executionId;
  expect(second).not.toBe(first);
  expect(world.ledger.peek('j1')).toMatchObject({ state: 'running', executionId: second });
  expect(world.starters.ecs.runsOf('j1').map((run) => run.executionId)).toEqual([first, second]);
  // A late copy of the first run's event changes nothing.
  expect(await world.completeRun.complete(notStarted(world, first))).toBe(CompletionResult.Ignored);
  expect(world.ledger.peek('j1')).toMatchObject({ state: 'running', executionId: second });
});

test('a waiting job gets the slot the run that never started gave up', async () => {
  const world = makeDeps({ settings: { pools: { default: 1 } } });
  const first = await runningEcsJob(world, 'j1');
  expect(await world.acquirer.process(messageOf(ecsJob('w1')))).toBe(AcquireResult.Waiting);
  world.queue.takeSent();
  await world.completeRun.complete(notStarted(world, first));
  expect(world.ledger.peek('w1')).toMatchObject({ state: 'reserved' });
  expect(world.ledger.peek('j1')).toMatchObject({ state: 'queued' });
});

test('past the retry budget, a run that never started ends the job failed', async () => {
  const world = makeDeps({ settings: { pools: { default: 1 }, backoff: { baseSeconds: 1, maxSeconds: 2, retryForSeconds: 10 } } });
  const first = await runningEcsJob(world, 'j1');
  world.clock.advance(11_000);
  expect(await world.completeRun.complete(notStarted(world, first))).toBe(CompletionResult.Released);
  expect(world.ledger.peek('j1')).toMatchObject({ state: 'failed', lastError: 'TaskFailedToStart: RESOURCE:MEMORY (retries used up)' });
  expect(world.leases.peekPool('default')!.inUse).toBe(0);
});
