import { AcquireResult } from '../../../shared/app/acquireJob';
import { appflowJob, deliverSent, glueJob, makeDeps, messageOf } from '../../support/fakes';

/**
 * Operators search logs by job: every line about a job names its pool and kind too (and its run once there is one),
 * whatever path wrote it. One scenario walks the acquirer, releaser and hand-off paths and checks every line.
 */
test('every log line that names a job also names its pool and kind', async () => {
  // Prepare: limit 1 so jobs wait and hand-offs happen; a throttled start, a refused start, a duplicate, an unknown pool
  const world = makeDeps({ settings: { pools: { default: 1 } } });
  world.clock.advance(1);
  // Act
  expect(await world.acquirer.process(messageOf(glueJob('a')))).toBe(AcquireResult.Started);
  expect(await world.acquirer.process(messageOf(appflowJob('w1')))).toBe(AcquireResult.Waiting);
  expect(await world.acquirer.process(messageOf(glueJob('a')))).toBe(AcquireResult.Duplicate);
  expect(await world.acquirer.process(messageOf(glueJob('lost', 'nowhere')))).toBe(AcquireResult.DeadLettered);
  world.starters.appflow.failNextStarts(1, 'transient');
  // w1 is handed the slot and started by the releaser: throttled, retried later
  await world.completeRun.complete(world.starters.glue.finish(world.ledger.peek('a')!.executionId!, 'succeeded'));
  world.clock.advance(60_000);
  await deliverSent(world); // w1 starts
  world.starters.glue.failNextStarts(1, 'permanent');
  expect(await world.acquirer.process(messageOf(glueJob('refused')))).toBe(AcquireResult.Waiting);
  // refused is handed the slot, its start refused for good: dead-lettered
  await world.completeRun.complete(world.starters.appflow.finish(world.ledger.peek('w1')!.executionId!, 'failed'));
  // Assess
  const aboutJobs = world.log.entries.filter((entry) => entry.extra.jobId !== undefined);
  expect(new Set(aboutJobs.map((entry) => entry.message)).size).toBeGreaterThanOrEqual(7);
  const missing = aboutJobs.filter((entry) => entry.extra.pool === undefined || entry.extra.kind === undefined);
  expect(missing.map((entry) => entry.message)).toEqual([]);
  const withRun = aboutJobs.filter((entry) => ['job started', 'run ended, slot released'].includes(entry.message));
  expect(withRun.length).toBeGreaterThanOrEqual(3);
  expect(withRun.every((entry) => typeof entry.extra.executionId === 'string')).toBe(true);
});
