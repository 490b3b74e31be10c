import { AcquireResult } from '../../../shared/app/acquireJob';
import { CallbackReports, ReportResult } from '../../../shared/app/callbackReports';
import { CompletionResult } from '../../../shared/app/completeRun';
import { MetricName } from '../../../shared/app/deps';
import type { CallbackJob, JobSpec } from '../../../shared/kinds/registry';
import { envelope } from '../../../shared/kinds/kindConformance';
import { CALLBACK_REPORT, reportMessage } from '../../../shared/kinds/callback/reports';
import { tokenOf } from '../../../shared/kinds/callback/token';
import { deliverSent, type FakeWorld, makeDeps, messageOf, parkGlueJob } from '../../support/fakes';

/** The callbacks function's service: token first, then a completion (CompleteRun) or a heartbeat (the ledger's step). */

const SECRET = 'unit-secret';
const spec = (id: string): JobSpec => ({
  id,
  pool: 'default',
  kind: 'callback',
  target: { sqs: 'https://sqs.us-east-1.amazonaws.com/1/w' },
  timeoutSeconds: 600,
});

/** A world whose callback starter hands out real tokens (as the real one does), with job `c1` running. */
async function running(
  options: Parameters<typeof makeDeps>[0] = {},
): Promise<{ world: FakeWorld; reports: CallbackReports; token: string }> {
  const world = makeDeps(options);
  const fake = world.starters.callback;
  const start = fake.start.bind(fake);
  fake.start = async (job, startOptions) => {
    await start(job, startOptions);
    return { executionId: tokenOf(SECRET, job.id) };
  };
  expect(await world.acquirer.process(messageOf(spec('c1')))).toBe(AcquireResult.Started);
  return { world, reports: new CallbackReports(world.deps, SECRET), token: tokenOf(SECRET, 'c1') };
}

test('a success report completes the run and frees its slot for the next job', async () => {
  const { world, reports, token } = await running({ settings: { pools: { default: 1 } } });
  await parkGlueJob(world, 'w1');
  expect(await reports.fromMessage(reportMessage({ type: 'completed', token, outcome: 'succeeded' }))).toBe(CompletionResult.Released);
  expect(world.ledger.peek('c1')).toMatchObject({ state: 'succeeded', executionId: token });
  expect((await deliverSent(world)).map((d) => d.result)).toEqual([AcquireResult.Started]);
});

test('a failure report ends the job failed with its reason; one with no reason says the system reported it', async () => {
  const { world, reports, token } = await running();
  expect(
    await reports.fromEvent(envelope(CALLBACK_REPORT.source, CALLBACK_REPORT.completed, { token, outcome: 'failed', reason: 'disk full' })),
  ).toBe(CompletionResult.Released);
  expect(world.ledger.peek('c1')).toMatchObject({ state: 'failed', lastError: 'disk full' });

  const second = await running();
  await second.reports.fromMessage(reportMessage({ type: 'completed', token: second.token, outcome: 'failed' }));
  expect(second.world.ledger.peek('c1')!.lastError).toBe('the system reported a failure');
});

test('a replayed report finds the job finished and changes nothing', async () => {
  const { world, reports, token } = await running();
  const report = reportMessage({ type: 'completed', token, outcome: 'succeeded' });
  await reports.fromMessage(report);
  const done = world.ledger.peek('c1');
  expect(await reports.fromMessage(reportMessage({ type: 'completed', token, outcome: 'failed', reason: 'replayed' }))).toBe(
    CompletionResult.AlreadyDone,
  );
  expect(world.ledger.peek('c1')).toEqual(done);
});

test('a forged token is dropped before any read or write, and counted', async () => {
  const { world, reports } = await running();
  const before = world.ledger.peek('c1');
  const calls = world.ledger.calls;
  const forged = [tokenOf('not the secret', 'c1'), tokenOf(SECRET, 'c1').replace('.c1', '.c2')];
  for (const token of forged) {
    expect(await reports.fromMessage(reportMessage({ type: 'completed', token, outcome: 'succeeded' }))).toBe(ReportResult.Forged);
    expect(await reports.fromMessage(reportMessage({ type: 'heartbeat', token }))).toBe(ReportResult.Forged);
  }
  expect(world.ledger.calls).toBe(calls);
  expect(world.ledger.peek('c1')).toEqual(before);
  expect(world.metrics.get(MetricName.IgnoredEvents)).toBe(4);
});

test('a heartbeat notes heartbeatAt on the job running that run; once the job is over it changes nothing', async () => {
  const { world, reports, token } = await running();
  world.clock.advance(30_000);
  expect(await reports.fromEvent(envelope(CALLBACK_REPORT.source, CALLBACK_REPORT.heartbeat, { token }))).toBe(ReportResult.Beat);
  expect(world.ledger.peek('c1')).toMatchObject({ state: 'running', heartbeatAt: world.clock.now() });

  await reports.fromMessage(reportMessage({ type: 'completed', token, outcome: 'succeeded' }));
  const done = world.ledger.peek('c1');
  expect(await reports.fromMessage(reportMessage({ type: 'heartbeat', token }))).toBe(ReportResult.Stale);
  expect(world.ledger.peek('c1')).toEqual(done);
});

test.each([
  ['not JSON', '{oops'],
  ['no token', '{"outcome":"succeeded"}'],
  ['an unknown outcome', JSON.stringify({ token: 'cb1.x.c1', outcome: 'done' })],
  ['an extra field', JSON.stringify({ token: 'cb1.x.c1', outcome: 'succeeded', extra: 1 })],
])('a malformed message (%s) is dropped, not retried', async (_what, body) => {
  const { world, reports } = await running();
  const calls = world.ledger.calls;
  expect(await reports.fromMessage(body)).toBe(ReportResult.Malformed);
  expect(world.ledger.calls).toBe(calls);
  expect(world.ledger.peek('c1')!.state).toBe('running');
});

describe('a callback job given up after a start of unknown outcome (its slot kept for a run that may exist)', () => {
  /** A world whose callback starter hands out real tokens and knows them before the start, as the real one does. */
  function tokenWorld(options: Parameters<typeof makeDeps>[0] = {}): { world: FakeWorld; reports: CallbackReports } {
    const world = makeDeps(options);
    const fake = world.starters.callback;
    const start = fake.start.bind(fake);
    fake.start = async (job, startOptions) => {
      await start(job, startOptions);
      return { executionId: tokenOf(SECRET, job.id) };
    };
    Object.assign(fake, { runIdOf: async (job: JobSpec) => tokenOf(SECRET, job.id) });
    return { world, reports: new CallbackReports(world.deps, SECRET) };
  }

  /** c1's start message was sent but its answer lost, and the retries' budget ran out: dead-lettered keeping its slot. */
  async function givenUp(world: FakeWorld, timeoutSeconds = 600): Promise<void> {
    world.starters.callback.loseNextStartAnswers(1);
    expect(await world.acquirer.process(messageOf({ ...(spec('c1') as CallbackJob), timeoutSeconds }))).toBe(AcquireResult.RetryScheduled);
    world.clock.advance(world.settings.backoff.retryForSeconds * 1000);
    world.starters.callback.failNextStarts(1, 'transient', 'InternalServerError');
    await deliverSent(world);
    expect(world.ledger.peek('c1')).toMatchObject({ state: 'dead', lease: { pool: 'default' } });
  }

  test("its own report gives the slot back at once, to the next job (it has the run's token recorded)", async () => {
    const { world, reports } = tokenWorld({ settings: { pools: { default: 1 } } });
    await givenUp(world);
    await parkGlueJob(world, 'w1');
    const token = tokenOf(SECRET, 'c1');
    expect(world.ledger.peek('c1')).toMatchObject({ executionId: token });

    expect(await reports.fromMessage(reportMessage({ type: 'completed', token, outcome: 'succeeded' }))).toBe(CompletionResult.Released);
    expect(world.ledger.peek('c1')).toMatchObject({ state: 'dead' });
    expect(world.ledger.peek('c1')!.lease).toBeUndefined();
    expect(world.metrics.get(MetricName.NotedCompletions)).toBe(0);
    expect((await deliverSent(world)).map((d) => d.result)).toEqual([AcquireResult.Started]);
    expect(world.ledger.peek('w1')!.state).toBe('running');
  });

  test('a report that came before the give-up (noted on its run) gives the slot back as the job is given up', async () => {
    const { world, reports } = tokenWorld();
    world.starters.callback.loseNextStartAnswers(1);
    expect(await world.acquirer.process(messageOf(spec('c1')))).toBe(AcquireResult.RetryScheduled);
    const token = tokenOf(SECRET, 'c1');
    // The system did the work and reported while Sluice was still retrying its start.
    expect(await reports.fromMessage(reportMessage({ type: 'completed', token, outcome: 'succeeded' }))).toBe(CompletionResult.Noted);
    world.clock.advance(world.settings.backoff.retryForSeconds * 1000);
    world.starters.callback.failNextStarts(1, 'transient', 'InternalServerError');
    await deliverSent(world);
    expect(world.ledger.peek('c1')).toMatchObject({ state: 'dead', executionId: token });
    expect(world.ledger.peek('c1')!.lease).toBeUndefined();
    expect(world.leases.poolView('default')!.inUse).toBe(0);
    expect(world.queue.deadLettersFor('c1')).toHaveLength(1);
  });

  test('without a report, the slot is kept until its own timeout (leaseUntil), not its kind\'s maximum run time', async () => {
    const { world } = tokenWorld();
    await givenUp(world, 600);
    const givenUpAt = world.clock.now();
    expect(world.ledger.peek('c1')!.leaseUntil).toBe(givenUpAt + 600_000);
    expect(world.settings.maxRunMs.callback).toBeGreaterThan(600_000);
    world.clock.advance(600_000 - 1);
    expect((await world.reconciler.run()).drift).toEqual({});
    world.clock.advance(1);
    expect((await world.reconciler.run()).drift).toEqual({ 'kept-slot-freed': 1 });
    expect(world.leases.poolView('default')!.inUse).toBe(0);
  });

  test("with heartbeatSeconds, still its timeout: a dead job's heartbeats are not recorded, so silence proves nothing", async () => {
    const { world } = tokenWorld();
    world.starters.callback.loseNextStartAnswers(1);
    await world.acquirer.process(messageOf({ ...(spec('c1') as CallbackJob), timeoutSeconds: 3600, heartbeatSeconds: 60 }));
    world.clock.advance(world.settings.backoff.retryForSeconds * 1000);
    world.starters.callback.failNextStarts(1, 'transient', 'InternalServerError');
    await deliverSent(world);
    expect(world.ledger.peek('c1')!.leaseUntil).toBe(world.clock.now() + 3600_000);
  });
});
