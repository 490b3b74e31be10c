import { AcquireResult } from '../../../shared/app/acquireJob';
import { CallbackReports, ReportResult } from '../../../shared/app/callbackReports';
import { CompletionResult } from '../../../shared/app/completeRun';
import { MetricName } from '../../../shared/app/deps';
import type { CallbackJob, JobSpec } from '../../../shared/kinds/registry';
import { envelope } from '../../../shared/kinds/kindConformance';
import type { StartMessage, TargetMessage } from '../../../shared/kinds/callback/messages';
import { CALLBACK_REPORT, reportMessage } from '../../../shared/kinds/callback/reports';
import { REREAD_MIN_INTERVAL_MS, TokenKeyring, type TokenKeys } from '../../../shared/kinds/callback/secret';
import type { TargetSender } from '../../../shared/kinds/callback/send/sender';
import { CallbackStarter } from '../../../shared/kinds/callback/starter';
import { checkToken, isRunId, makeToken, runIdOfToken, TOKEN_EXPIRY_MARGIN_SECONDS } from '../../../shared/kinds/callback/token';
import { deliverSent, type FakeWorld, makeDeps, messageOf, parkGlueJob, SimulatedCrash } from '../../support/fakes';

/**
 * The callbacks function's service: token first (its MAC with the current or previous key, its expiry), then a
 * completion (CompleteRun) or a heartbeat (the ledger's step) of the token's run. The callback starter is the real one
 * (its tokens and run ids), sending to a recording target: the tokens are what the user's system received.
 */

const SECRET = 'unit-secret';
const spec = (id: string, more: Partial<CallbackJob> = {}): JobSpec => ({
  id,
  pool: 'default',
  kind: 'callback',
  target: { sqs: 'https://sqs.us-east-1.amazonaws.com/1/w' },
  timeoutSeconds: 600,
  ...more,
});

interface CallbackWorld {
  world: FakeWorld;
  reports: CallbackReports;
  /** the token of the last start message the target got for the job */
  tokenOf(jobId: string): string;
  /** the keys the stage's secret holds now (a rotation changes them; containers see it when they read them) */
  secret: { keys: TokenKeys };
  /** Secrets Manager reads the callbacks container made */
  reads(): number;
  /** The acquirer's container is new: it reads the keys again on its first start. */
  coldStartAcquirer(): void;
}

/**
 * A world whose callback starter is the real one (its tokens made with the keys its own container read), the target a
 * recording system, and a callbacks service with a keyring of its own (another container).
 */
function callbackWorld(options: Parameters<typeof makeDeps>[0] = {}): CallbackWorld {
  const world = makeDeps(options);
  const secret = { keys: { current: SECRET } as TokenKeys };
  const sent: TargetMessage[] = [];
  const target: TargetSender = { send: async (_address, message) => void sent.push(message) };
  const acquirerKeyring = () => new TokenKeyring(async () => ({ ...secret.keys }), world.clock);
  let acquirerKeys = acquirerKeyring();
  const real = new CallbackStarter({
    senders: { sqs: async () => target, eventBus: async () => target, lambda: async () => target },
    signingKey: () => acquirerKeys.signingKey(),
    allowed: { sqs: '*', eventBus: '*', lambda: '*' },
    now: () => world.clock.now(),
  });
  const fake = world.starters.callback;
  const fakeStart = fake.start.bind(fake);
  // The message is sent first: a fake failure after it is a start whose answer was lost.
  fake.start = async (job, startOptions) => {
    const { executionId } = await real.start(job, startOptions);
    await fakeStart(job, startOptions);
    return { executionId };
  };
  Object.assign(fake, { runIdOf: (job: JobSpec, runOptions?: object) => real.runIdOf(job, runOptions) });
  let reads = 0;
  const callbacksKeys = new TokenKeyring(async () => {
    reads += 1;
    return { ...secret.keys };
  }, world.clock);
  return {
    world,
    reports: new CallbackReports(world.deps, callbacksKeys),
    tokenOf: (jobId) => sent.filter((m): m is StartMessage => m.type === 'start' && m.jobId === jobId).at(-1)!.token,
    secret,
    reads: () => reads,
    coldStartAcquirer: () => void (acquirerKeys = acquirerKeyring()),
  };
}

/** A world with job `c1` running. */
async function running(options: Parameters<typeof makeDeps>[0] = {}): Promise<CallbackWorld & { token: string }> {
  const cw = callbackWorld(options);
  expect(await cw.world.acquirer.process(messageOf(spec('c1')))).toBe(AcquireResult.Started);
  return { ...cw, token: cw.tokenOf('c1') };
}

test('a success report completes the run and frees its slot for the next job', async () => {
  const { world, reports, token } = await running({ settings: { pools: { default: 1 } } });
  await parkGlueJob(world, 'w1');
  expect(await reports.fromMessage(reportMessage({ type: 'completed', token, outcome: 'succeeded' }))).toBe(CompletionResult.Released);
  expect(world.ledger.peek('c1')).toMatchObject({ state: 'succeeded', executionId: runIdOfToken(token) });
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
  const { world, reports, token } = await running();
  const before = world.ledger.peek('c1');
  const calls = world.ledger.calls;
  const claims = checkToken([SECRET], token, world.clock.now());
  if (claims.verdict === 'forged') throw new Error('the token of c1 does not check');
  const forged = [makeToken('not the secret', claims.claims), token.replace('.c1', '.c2')];
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

test('Sluice records and logs the run id, not the token: what it shows ends nothing', async () => {
  const { world, reports, token } = await running();
  const shown = world.ledger.peek('c1')!.executionId!;
  expect(isRunId(shown)).toBe(true);
  expect(shown).toBe(runIdOfToken(token));
  const logged = JSON.stringify(world.log.entries);
  expect(logged).toContain(shown);
  expect(logged).not.toContain(token);
  expect(logged).not.toContain(token.split('.')[1]);
  const before = world.ledger.peek('c1');
  expect(await reports.fromMessage(reportMessage({ type: 'completed', token: shown, outcome: 'failed', reason: 'x' }))).toBe(
    ReportResult.Forged,
  );
  expect(world.ledger.peek('c1')).toEqual(before);
  expect(JSON.stringify(world.log.entries)).not.toContain(token);
});

test('a token of run 1 cannot end run 2 of the same job id (the id used again once its record expired)', async () => {
  const { world, reports, tokenOf, token: first } = await running();
  expect(await reports.fromMessage(reportMessage({ type: 'completed', token: first, outcome: 'succeeded' }))).toBe(
    CompletionResult.Released,
  );
  world.ledger.expire('c1');
  world.clock.advance(1_000);
  expect(await world.acquirer.process(messageOf(spec('c1')))).toBe(AcquireResult.Started);
  const second = tokenOf('c1');
  expect(runIdOfToken(second)).not.toBe(runIdOfToken(first));
  const running2 = world.ledger.peek('c1');
  for (const report of [
    reportMessage({ type: 'completed', token: first, outcome: 'failed', reason: 'replayed from run 1' }),
    reportMessage({ type: 'heartbeat', token: first }),
  ])
    expect(await reports.fromMessage(report)).not.toBe(CompletionResult.Released);
  expect(world.ledger.peek('c1')).toEqual(running2);
  expect(await reports.fromMessage(reportMessage({ type: 'completed', token: second, outcome: 'succeeded' }))).toBe(
    CompletionResult.Released,
  );
});

test('an expired token is refused with its reason, before any read or write', async () => {
  const { world, reports, token } = await running();
  const before = world.ledger.peek('c1');
  const calls = world.ledger.calls;
  world.clock.advance((600 + TOKEN_EXPIRY_MARGIN_SECONDS) * 1000);
  expect(await reports.fromMessage(reportMessage({ type: 'completed', token, outcome: 'succeeded' }))).toBe(ReportResult.Expired);
  expect(await reports.fromMessage(reportMessage({ type: 'heartbeat', token }))).toBe(ReportResult.Expired);
  expect(world.ledger.calls).toBe(calls);
  expect(world.ledger.peek('c1')).toEqual(before);
  const warning = world.log.entries.find((e) => e.message.includes('expired token'))!;
  expect(warning).toMatchObject({
    level: 'warn',
    extra: { jobId: 'c1', executionId: before!.executionId, expiredAt: new Date(world.clock.now()).toISOString() },
  });
  expect(world.metrics.get(MetricName.IgnoredEvents)).toBe(2);
});

describe('a rotation of the token key (the secret: AWSCURRENT a new value, AWSPREVIOUS the old one)', () => {
  test('a token made before it still ends its run (the previous key), in a container that read the keys after it', async () => {
    const { world, reports, secret, token } = await running();
    secret.keys = { current: 'rotated', previous: SECRET };
    // A new container: it reads the keys as they are now.
    const fresh = new CallbackReports(world.deps, new TokenKeyring(async () => ({ ...secret.keys }), world.clock));
    expect(await fresh.fromMessage(reportMessage({ type: 'completed', token, outcome: 'succeeded' }))).toBe(CompletionResult.Released);
    // As the old container (its keys read before the rotation) would: the token was made with the key it has.
    expect(await reports.fromMessage(reportMessage({ type: 'completed', token, outcome: 'succeeded' }))).toBe(CompletionResult.AlreadyDone);
  });

  test('a token made after it ends its run in a container that read the keys before it: it reads them again', async () => {
    const cw = await running({ settings: { pools: { default: 3 } } });
    // The callbacks container reads the keys (the first report), before the rotation.
    expect(await cw.reports.fromMessage(reportMessage({ type: 'heartbeat', token: cw.token }))).toBe(ReportResult.Beat);
    expect(cw.reads()).toBe(1);
    cw.secret.keys = { current: 'rotated', previous: SECRET };
    // A new acquirer container reads the rotated keys; it makes tokens with the new key once it has known it for the
    // interval that limits the callbacks container's reads (before that, with the previous one).
    cw.coldStartAcquirer();
    expect(await cw.world.acquirer.process(messageOf(spec('c2')))).toBe(AcquireResult.Started);
    expect(checkToken([SECRET], cw.tokenOf('c2'), cw.world.clock.now()).verdict).toBe('valid');
    // Its report at once: the callbacks container may not read the keys again yet, and need not.
    expect(await cw.reports.fromMessage(reportMessage({ type: 'completed', token: cw.tokenOf('c2'), outcome: 'succeeded' }))).toBe(
      CompletionResult.Released,
    );
    expect(cw.reads()).toBe(1);
    cw.world.clock.advance(REREAD_MIN_INTERVAL_MS);
    expect(await cw.world.acquirer.process(messageOf(spec('c3')))).toBe(AcquireResult.Started);
    const rotated = cw.tokenOf('c3');
    expect(checkToken([SECRET], rotated, cw.world.clock.now()).verdict).toBe('forged');
    expect(checkToken(['rotated'], rotated, cw.world.clock.now()).verdict).toBe('valid');
    // The callbacks container still has only the old key: the token fails it, it reads the keys again, and they check it.
    expect(await cw.reports.fromMessage(reportMessage({ type: 'completed', token: rotated, outcome: 'succeeded' }))).toBe(
      CompletionResult.Released,
    );
    expect(cw.reads()).toBe(2);
    // A token made before the rotation still checks (the previous key).
    expect(await cw.reports.fromMessage(reportMessage({ type: 'completed', token: cw.token, outcome: 'succeeded' }))).toBe(
      CompletionResult.Released,
    );
    expect(cw.reads()).toBe(2);
  });

  test('a forged token is still refused; forged tokens make at most one read per interval', async () => {
    const cw = await running();
    cw.secret.keys = { current: 'rotated', previous: SECRET };
    const claims = checkToken([SECRET], cw.token, cw.world.clock.now());
    if (claims.verdict === 'forged') throw new Error('the token of c1 does not check');
    const forged = makeToken('a guess', claims.claims);
    const calls = cw.world.ledger.calls;
    for (let i = 0; i < 20; i++)
      expect(await cw.reports.fromMessage(reportMessage({ type: 'completed', token: forged, outcome: 'succeeded' }))).toBe(
        ReportResult.Forged,
      );
    // The first read, and one more once the interval since it passed: no more, whatever the number of forged tokens.
    expect(cw.reads()).toBe(1);
    cw.world.clock.advance(REREAD_MIN_INTERVAL_MS);
    for (let i = 0; i < 20; i++) await cw.reports.fromMessage(reportMessage({ type: 'completed', token: forged, outcome: 'succeeded' }));
    expect(cw.reads()).toBe(2);
    expect(cw.world.ledger.calls).toBe(calls);
    expect(cw.world.ledger.peek('c1')!.state).toBe('running');
  });
});

test.each([
  ['not JSON', '{oops'],
  ['no token', '{"outcome":"succeeded"}'],
  ['an unknown outcome', JSON.stringify({ token: 'cb2.x.1.2.c1', outcome: 'done' })],
  ['an extra field', JSON.stringify({ token: 'cb2.x.1.2.c1', outcome: 'succeeded', extra: 1 })],
])('a malformed message (%s) is dropped, not retried', async (_what, body) => {
  const { world, reports } = await running();
  const calls = world.ledger.calls;
  expect(await reports.fromMessage(body)).toBe(ReportResult.Malformed);
  expect(world.ledger.calls).toBe(calls);
  expect(world.ledger.peek('c1')!.state).toBe('running');
});

describe('a callback job given up after a start of unknown outcome (its slot kept for a run that may exist)', () => {
  /** The real starter knows the run id before the start (JobStarter.runIdOf). */
  const tokenWorld = callbackWorld;

  /** c1's start message was sent but its answer lost, and the retries' budget ran out: dead-lettered keeping its slot. */
  async function givenUp(world: FakeWorld, timeoutSeconds = 600): Promise<void> {
    world.starters.callback.loseNextStartAnswers(1);
    expect(await world.acquirer.process(messageOf({ ...(spec('c1') as CallbackJob), timeoutSeconds }))).toBe(AcquireResult.RetryScheduled);
    world.clock.advance(world.settings.backoff.retryForSeconds * 1000);
    world.starters.callback.failNextStarts(1, 'transient', 'InternalServerError');
    await deliverSent(world);
    expect(world.ledger.peek('c1')).toMatchObject({ state: 'dead', lease: { pool: 'default' } });
  }

  test('its own report gives the slot back at once, to the next job (it has the run id recorded)', async () => {
    const { world, reports, tokenOf } = tokenWorld({ settings: { pools: { default: 1 } } });
    await givenUp(world);
    await parkGlueJob(world, 'w1');
    const token = tokenOf('c1');
    expect(world.ledger.peek('c1')).toMatchObject({ executionId: runIdOfToken(token) });

    expect(await reports.fromMessage(reportMessage({ type: 'completed', token, outcome: 'succeeded' }))).toBe(CompletionResult.Released);
    expect(world.ledger.peek('c1')).toMatchObject({ state: 'dead' });
    expect(world.ledger.peek('c1')!.lease).toBeUndefined();
    expect(world.metrics.get(MetricName.NotedCompletions)).toBe(0);
    expect((await deliverSent(world)).map((d) => d.result)).toEqual([AcquireResult.Started]);
    expect(world.ledger.peek('w1')!.state).toBe('running');
  });

  test('a report that came before the give-up (noted on its run) gives the slot back as the job is given up', async () => {
    const { world, reports, tokenOf } = tokenWorld();
    world.starters.callback.loseNextStartAnswers(1);
    expect(await world.acquirer.process(messageOf(spec('c1')))).toBe(AcquireResult.RetryScheduled);
    const token = tokenOf('c1');
    // The system did the work and reported while Sluice was still retrying its start.
    expect(await reports.fromMessage(reportMessage({ type: 'completed', token, outcome: 'succeeded' }))).toBe(CompletionResult.Noted);
    world.clock.advance(world.settings.backoff.retryForSeconds * 1000);
    world.starters.callback.failNextStarts(1, 'transient', 'InternalServerError');
    await deliverSent(world);
    expect(world.ledger.peek('c1')).toMatchObject({ state: 'dead', executionId: runIdOfToken(token) });
    expect(world.ledger.peek('c1')!.lease).toBeUndefined();
    expect(world.leases.poolView('default')!.inUse).toBe(0);
    expect(world.queue.deadLettersFor('c1')).toHaveLength(1);
  });

  test('a report noted before the give-up, handed back to an invocation that died before applying it: the reconciler gives the slot back at its next run, not at leaseUntil', async () => {
    const { world, reports, tokenOf } = tokenWorld();
    world.starters.callback.loseNextStartAnswers(1);
    expect(await world.acquirer.process(messageOf(spec('c1')))).toBe(AcquireResult.RetryScheduled);
    expect(await reports.fromMessage(reportMessage({ type: 'completed', token: tokenOf('c1'), outcome: 'succeeded' }))).toBe(
      CompletionResult.Noted,
    );
    // The give-up records the run and is handed the report, then dies before applying it.
    const recordRun = world.ledger.recordRun.bind(world.ledger);
    world.ledger.recordRun = async (ref, now) => {
      expect(await recordRun(ref, now)).toMatchObject({ outcome: 'succeeded' });
      throw new SimulatedCrash('after recordRun');
    };
    world.clock.advance(world.settings.backoff.retryForSeconds * 1000);
    world.starters.callback.failNextStarts(1, 'transient', 'InternalServerError');
    await deliverSent(world).catch(() => undefined);
    world.ledger.recordRun = recordRun;
    expect(world.ledger.peek('c1')).toMatchObject({ state: 'dead', lease: { pool: 'default' } });
    // Well before its leaseUntil (its timeout), the next reconciler run gives the slot back.
    expect(world.ledger.peek('c1')!.leaseUntil).toBeGreaterThan(world.clock.now() + 60_000);
    expect((await world.reconciler.run()).drift).toEqual({ 'kept-slot-freed': 1 });
    expect(world.ledger.peek('c1')!.lease).toBeUndefined();
    expect(world.leases.poolView('default')!.inUse).toBe(0);
  });

  test("without a report, the slot is kept until its own timeout (leaseUntil), not its kind's maximum run time", async () => {
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
