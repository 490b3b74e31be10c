import { AcquireResult } from '../../../shared/app/acquireJob';
import { CallbackReports, ReportResult } from '../../../shared/app/callbackReports';
import { CompletionResult } from '../../../shared/app/completeRun';
import { MetricName } from '../../../shared/app/deps';
import type { JobSpec } from '../../../shared/domain/job';
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
