import { TransientStartError } from '../../../shared/errors';
import { ecs } from '../../../shared/kinds/ecs';
import { clientTokenOf, startedByOf } from '../../../shared/kinds/ecs/spec';
import { taskOutcome } from '../../../shared/kinds/ecs/taskOutcome';
import { matchesPattern } from '../../../local/bus';
import { type JobApiSimulator, startJobApiSimulator } from '../../../local/simulators';
import { type JobStarter, RunStatus } from '../../../shared/ports/jobStarter';
import { waitFor } from '../../support/waitFor';
import type { JobSpec } from '../../../shared/kinds/registry';
import { STARTER_LOADERS } from '../../../shared/kinds/starterLoaders';

/**
 * What ECS adds to the conformance suite: placement failures are refusals, a changed request under the job's token
 * finds its first task, a lost answer is found again by the token, and client tokens and startedBy markers stay within
 * ECS's rules for every id Sluice accepts.
 */

let sim: JobApiSimulator;
let starter: JobStarter;
beforeAll(async () => {
  sim = await startJobApiSimulator({ durationMs: (_kind, name) => (name.startsWith('slow-') ? 60_000 : 50) });
  Object.assign(process.env, {
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'ecs',
    AWS_SECRET_ACCESS_KEY: 'ecs',
    AWS_ENDPOINT_URL_ECS: sim.endpoint,
  });
  starter = await STARTER_LOADERS.ecs({ warn: () => undefined });
});
afterAll(() => sim?.close());
afterEach(() => sim.clearFaults());

const job = (id: string, taskDefinition: string, extra: Record<string, unknown> = {}): JobSpec =>
  ecs.schema.parse({ kind: 'ecs', id, cluster: 'sluice-jobs', taskDefinition, launchType: 'FARGATE', ...extra }) as JobSpec;
const tasksOf = (id: string) => sim.runs().filter((r) => r.kind === 'ecs' && r.clientToken === clientTokenOf(id));

test('a RunTask answered with failures and no task is a definite refusal; the next try starts the task', async () => {
  sim.setFaults({ ecs: { failStarts: { count: 1, error: 'RESOURCE:CPU', message: 'no container instance has 4096 CPU units free' } } });
  const spec = job('placed-1', 'slow-etl');
  const error = await starter.start(spec).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(TransientStartError);
  expect(error).toMatchObject({ code: 'TaskNotPlaced', definite: true, message: expect.stringContaining('RESOURCE:CPU') });
  expect(tasksOf('placed-1')).toEqual([]);
  const { executionId } = await starter.start(spec);
  expect(tasksOf('placed-1').map((t) => t.executionId)).toEqual([executionId]);
  await starter.stop(spec, executionId);
});

test('a start whose answer was lost is found again by its token: one task', async () => {
  sim.setFaults({ ecs: { failStartsAfterStarting: { count: 1, error: 'ServerException' } } });
  const spec = job('lost-1', 'slow-etl');
  const error = await starter.start(spec).catch((e: unknown) => e);
  expect(error).toMatchObject({ code: 'ServerException', definite: false });
  const [created] = tasksOf('lost-1');
  expect(created).toBeDefined();
  expect((await starter.start(spec, { mayHaveStarted: true })).executionId).toBe(created!.executionId);
  expect(tasksOf('lost-1')).toHaveLength(1);
  await starter.stop(spec, created!.executionId);
});

test('a start of the same job with other overrides gets ConflictException naming the first task, and takes it', async () => {
  const first = await starter.start(job('changed-1', 'slow-etl'));
  const changed = job('changed-1', 'slow-etl', { overrides: { containerOverrides: [{ name: 'main', command: ['--day', '2'] }] } });
  const again = await starter.start(changed, { mayHaveStarted: true });
  expect(again.executionId).toBe(first.executionId);
  expect(tasksOf('changed-1')).toHaveLength(1);
  expect(
    sim
      .startCalls()
      .filter((c) => c.clientToken === clientTokenOf('changed-1'))
      .map((c) => c.error),
  ).toEqual([undefined, 'ConflictException']);
  await starter.stop(changed, first.executionId);
});

test("the task carries the job's startedBy marker: its stop event matches the releaser's rule, and is read as the job's", async () => {
  const spec = job('marked-1', 'ok-etl');
  const { executionId } = await starter.start(spec);
  const { event } = await waitFor('the stop event', () => sim.emitted().find((e) => e.executionId === executionId), 5_000, 5);
  expect((event.detail as { startedBy?: string }).startedBy).toBe(startedByOf('marked-1'));
  expect(ecs.events.rules.some((rule) => matchesPattern(rule, event))).toBe(true);
  expect(ecs.events.parse(event)).toEqual({
    kind: 'ecs',
    executionId,
    name: expect.stringMatching(/:task-definition\/ok-etl:1$/),
    outcome: 'succeeded',
    detail: 'STOPPED: every container exited 0',
  });
  const foreign = { ...event, detail: { ...(event.detail as object), startedBy: 'ecs-svc/9223370545345641169' } };
  expect(ecs.events.rules.some((rule) => matchesPattern(rule, foreign))).toBe(false);
});

test('a task a capacity provider could not place stops with TaskFailedToStart RESOURCE:MEMORY: it did not start (not a failed run)', async () => {
  sim.setFaults({
    ecs: { failStartsAfterStarting: { count: 1, error: 'RESOURCE:MEMORY', message: 'no capacity within the provisioning timeout' } },
  });
  const spec = job('noroom-1', 'ok-etl', {
    launchType: undefined,
    capacityProviderStrategy: [{ capacityProvider: 'sluice-asg', weight: 1 }],
  });
  // RunTask answered with the task (PROVISIONING): the start is recorded, a run id known.
  const { executionId } = await starter.start(spec);
  const { event } = await waitFor('the stop event', () => sim.emitted().find((e) => e.executionId === executionId), 5_000, 5);
  expect(event.detail).toMatchObject({ stopCode: 'TaskFailedToStart', stoppedReason: expect.stringContaining('RESOURCE:MEMORY') });
  expect(ecs.events.rules.some((rule) => matchesPattern(rule, event))).toBe(true);
  expect(ecs.events.parse(event)).toMatchObject({ executionId, outcome: 'not-started' });
  expect(await starter.status(spec, executionId)).toBe(RunStatus.NotStarted);
  // Nothing is left to stop.
  await expect(starter.stop(spec, executionId)).resolves.toBe('already-ended');
});

test('a start replacing a task that never started gets a token of its own: a new task, found again when repeated', async () => {
  sim.setFaults({ ecs: { failStartsAfterStarting: { count: 1, error: 'RESOURCE:CPU', message: 'no capacity' } } });
  const spec = job('noroom-2', 'slow-etl', {
    launchType: undefined,
    capacityProviderStrategy: [{ capacityProvider: 'sluice-asg', weight: 1 }],
  });
  const { executionId: first } = await starter.start(spec);
  await waitFor('the task to stop', async () => (await starter.status(spec, first)) === RunStatus.NotStarted, 5_000, 5);
  // The job's own token answers with the task that never started, for 24 hours: a retry must not use it.
  expect((await starter.start(spec, { mayHaveStarted: true })).executionId).toBe(first);
  const { executionId: second } = await starter.start(spec, { replacesRun: first });
  expect(second).not.toBe(first);
  expect(await starter.status(spec, second)).toBe(RunStatus.InProgress);
  // A resumed start of that retry (its answer lost, say) finds the same new task: one task per retry.
  expect((await starter.start(spec, { replacesRun: first, mayHaveStarted: true })).executionId).toBe(second);
  expect(sim.runs().filter((r) => r.kind === 'ecs' && r.args.startedBy === startedByOf('noroom-2'))).toHaveLength(2);
  expect(clientTokenOf('noroom-2', first)).toMatch(/^sluiceh-[!-~]+-[0-9a-f]{20}$/);
  expect(clientTokenOf('noroom-2', first).length).toBeLessThanOrEqual(64);
  await starter.stop(spec, second);
});

test('a task that failed to start for another reason (an image that cannot be pulled) is a failed run', () => {
  const stopped = (stoppedReason: string) => ({
    lastStatus: 'STOPPED',
    stopCode: 'TaskFailedToStart',
    stoppedReason,
    containers: [{ name: 'main', reason: 'CannotPullContainerError' }],
  });
  expect(taskOutcome(stopped('CannotPullContainerError: pull image manifest has been retried 5 time(s)'))?.outcome).toBe('failed');
  expect(taskOutcome(stopped('ResourceInitializationError: unable to pull secrets'))?.outcome).toBe('failed');
  expect(taskOutcome(stopped('RESOURCE:CPU'))?.outcome).toBe('not-started');
  expect(taskOutcome({ ...stopped('RESOURCE:MEMORY'), stopCode: 'EssentialContainerExited' })?.outcome).toBe('failed');
});

test('a task ECS no longer knows (stopped over an hour ago) is gone: DescribeTasks answers it MISSING', async () => {
  const spec = job('gone-1', 'ok-etl');
  const { executionId } = await starter.start(spec);
  await waitFor('the task to stop', async () => (await starter.status(spec, executionId)) === RunStatus.Succeeded, 5_000, 5);
  sim.reset();
  expect(await starter.status(spec, executionId)).toBe(RunStatus.Gone);
});

test('the spec takes a launch type or a capacity provider strategy, not both', () => {
  const both = { launchType: 'FARGATE', capacityProviderStrategy: [{ capacityProvider: 'FARGATE_SPOT', weight: 1 }] };
  expect(ecs.schema.safeParse({ kind: 'ecs', id: 'x', cluster: 'c', taskDefinition: 'td', ...both }).success).toBe(false);
  const strategy = { capacityProviderStrategy: both.capacityProviderStrategy };
  expect(ecs.schema.safeParse({ kind: 'ecs', id: 'x', cluster: 'c', taskDefinition: 'td:3', ...strategy }).success).toBe(true);
});

test('client tokens and startedBy markers stay within ECS rules for every id Sluice accepts, one per id', () => {
  const ids = ['a', 'A.b_c-d', 'org:acme:order-7', 'x'.repeat(57), 'x'.repeat(58), 'y'.repeat(121), 'y'.repeat(122), 'z'.repeat(128)];
  for (const id of ids) {
    expect(clientTokenOf(id)).toMatch(/^sluice[!-~]{1,58}$/);
    expect(startedByOf(id)).toMatch(/^sluice[A-Za-z0-9_-]{1,122}$/);
  }
  expect(clientTokenOf('x'.repeat(57))).toBe(`sluice-${'x'.repeat(57)}`);
  expect(new Set(ids.map((id) => clientTokenOf(id))).size).toBe(ids.length);
  expect(new Set(ids.map(startedByOf)).size).toBe(ids.length);
  expect(startedByOf('org:acme')).not.toBe(startedByOf('org_acme'));
});
