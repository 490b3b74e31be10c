import { handler as releaser } from '../../functions/releaser';
import { Drift } from '../../shared/app/reconcile';
import { JobState } from '../../shared/domain/jobState';
import type { LocalStack } from '../../local/stack';
import { createLambdaContext } from '../../local/poller';
import { container } from '../../shared/runtime/container';
import { type BadEvent, badEvents, badMessages } from '../fixtures/badMessages';
import { expectEveryJobRanOnce, jobRecord, runsOf } from '../support/invariants';
import {
  captureSends,
  pauseReconciler,
  reconcilePass,
  samplePool,
  scanTable,
  sendRaw,
  watchDeliveries,
  withVisibilityTimeout,
} from '../support/probes';
import { startPoolStack } from '../support/poolStack';
import { drainQueue, poolItem, queueDepth } from '../support/testStack';
import { waitFor } from '../support/waitFor';

/**
 * Bad input end to end: malformed job messages through SQS to the acquirer, malformed completion events through the
 * bus to the releaser. The tests that count receives run with a 60 s visibility timeout (withVisibilityTimeout): on a
 * busy machine a batch can take longer than the local 4 s, and a slow batch is not a retry. Each test has its own pools; job and flow names start with "<pool>--" so the simulator counts
 * runs per pool, and "--<n>ms" sets a run's duration.
 */
const POOLS = { badin: 2, goodin: 2, evt: 2, oversize: 1 };

let stack: LocalStack;
beforeAll(async () => {
  stack = await startPoolStack(POOLS, { defaultRunMs: 150 });
}, 60_000);
afterAll(() => stack?.stop());

const goodJob = (pool: string, i: number, ms = 150) =>
  i % 2 === 0
    ? { kind: 'appflow', pool, id: `${pool}-good-${i}`, flowName: `${pool}--good-${i}--${ms}ms` }
    : { kind: 'glue', pool, id: `${pool}-good-${i}`, jobName: `${pool}--good-${i}--${ms}ms`, arguments: { '--day': '2026-11-22' } };

test(
  'every malformed job message is dead-lettered once with its reason, holds no slot, and good jobs alongside still run',
  () =>
    withVisibilityTimeout(stack, 60, async () => {
      // Prepare: the pool the bad messages name exists (so a slot taken by mistake would show), and is watched.
      await container().poolAdmin.setLimit('badin', POOLS.badin);
      const corpus = badMessages({ pool: 'badin', tag: 'bad' });
      expect(corpus.length).toBeGreaterThanOrEqual(30);
      const good = Array.from({ length: 6 }, (_, i) => goodJob('goodin', i));
      const receives = watchDeliveries();
      const slots = samplePool(stack, 'badin');
      const sent = new Map<string, (typeof corpus)[number]>();
      const retried = () => [...sent.keys()].filter((id) => receives.count(id) > 1);
      try {
        // Act: bad and good messages interleaved, one SendMessage each (as different producers would).
        for (const [i, bad] of corpus.entries()) {
          sent.set(await sendRaw(stack, bad.body), bad);
          if (i % 10 === 0) await sendRaw(stack, JSON.stringify(good[i / 10]));
        }
        for (const spec of good.slice(Math.ceil(corpus.length / 10))) await sendRaw(stack, JSON.stringify(spec));

        // Every bad message received, nothing left in the job queue (in flight or delayed counts), or a retry seen.
        const unseen = () => [...sent.keys()].filter((id) => receives.count(id) === 0);
        let depth = -1;
        await waitFor(
          'the bad messages to be received and the job queue to empty',
          async () => {
            depth = await queueDepth(stack, stack.queueUrl);
            return retried().length > 0 || (unseen().length === 0 && depth === 0);
          },
          30_000,
          50,
        ).catch((error: Error) => {
          throw new Error(
            `${error.message}: queue depth ${depth}, not received: ${unseen()
              .map((id) => sent.get(id)!.name)
              .join(', ')}`,
          );
        });
        await waitFor(
          'the dead-letter queue to hold every bad message',
          async () => (await queueDepth(stack, stack.deadLetterUrl)) >= corpus.length,
          10_000,
          50,
        );
      } finally {
        await slots.stop();
        receives.stop();
      }

      // Assess: received once each (never retried), nothing left behind.
      expect(retried().map((id) => sent.get(id)!.name)).toEqual([]);

      // One DLQ copy per bad message, its reason naming the problem. Each was dead-lettered as it arrived, so its copy is
      // the body as sent, byte for byte (what SQS's own redrive would put back), and names the message SQS gave its sender
      // (sluice-messageId).
      const dead = await drainQueue(stack, stack.deadLetterUrl);
      const fixtureOf = (message: (typeof dead)[number]) => sent.get(message.attributes['sluice-messageId'] ?? '');
      const copiesOf = new Map<(typeof corpus)[number] | undefined, typeof dead>();
      for (const message of dead) copiesOf.set(fixtureOf(message), [...(copiesOf.get(fixtureOf(message)) ?? []), message]);
      const problems = corpus.flatMap((bad) => {
        const copies = copiesOf.get(bad) ?? [];
        if (copies.length !== 1) return [`${bad.name}: ${copies.length} copies in the DLQ`];
        const { body, attributes } = copies[0]!;
        const reason = attributes['sluice-reason'];
        return [
          ...(reason !== undefined && bad.reason.test(reason)
            ? []
            : [`${bad.name}: reason ${JSON.stringify(reason)} does not match ${bad.reason}`]),
          ...(body === bad.body
            ? []
            : [`${bad.name}: the DLQ body is not the body sent (${Buffer.byteLength(body)} bytes, sent ${Buffer.byteLength(bad.body)})`]),
          ...(attributes['sluice-truncated-from'] === undefined ? [] : [`${bad.name}: cut`]),
        ];
      });
      expect(problems).toEqual([]);
      expect(dead).toHaveLength(corpus.length);

      // No slot was ever taken for a bad message, and only the unknown-pool job (valid, but unrunnable) is in the ledger.
      expect(slots.maxInUse()).toBe(0);
      const badin = await poolItem(stack, 'badin');
      expect(badin?.holders).toEqual({});
      expect(badin?.inUse).toBe(0);
      const items = await scanTable(stack);
      const badJobs = items.filter((item) => String(item.pk).startsWith('JOB#') && !good.some((g) => item.pk === `JOB#${g.id}`));
      expect(badJobs.map((item) => [item.jobId, item.state])).toEqual([['bad-nopool', JobState.Dead]]);
      expect(items.filter((item) => String(item.pk).startsWith('POOL#badin'))).toEqual([
        expect.objectContaining({ pk: 'POOL#badin', sk: 'POOL', inUse: 0 }),
      ]);
      // The good jobs sent alongside ran, once each, within the limit (after the DLQ was read: this drains it).
      await expectEveryJobRanOnce(stack, { pool: 'goodin', limit: POOLS.goodin, ids: good.map((g) => g.id) });
      // Nothing is left in the job queue (the good jobs' wake-ups were consumed too).
      expect(await queueDepth(stack, stack.queueUrl)).toBe(0);
    }),
  90_000,
);

/**
 * SQS counts attributes in the message size (1 MiB for both, the job queue's and the DLQ's MaximumMessageSize), so a
 * body within the attributes' few KB of it cannot be dead-lettered whole: the copy keeps as much of it as fits beside
 * them and says how big the original was (sluice-truncated-from), so the send never fails and the message is not
 * retried. (It was far over the 64 KiB a job may be: it could never have run.)
 */
test(
  'a message near the SQS size limit is dead-lettered at once, with its reason, cut to fit beside its attributes',
  () =>
    withVisibilityTimeout(stack, 60, async () => {
      const body = JSON.stringify({
        kind: 'glue',
        pool: 'oversize',
        id: 'oversize-1',
        jobName: 'oversize--x',
        arguments: { '--pad': 'p'.repeat(1_048_400) },
      });
      const receives = watchDeliveries();
      const messageId = await sendRaw(stack, body);
      try {
        await waitFor('the message to be received', () => receives.count(messageId) >= 1, 10_000, 25);
        // Done when it is out of the job queue, or as soon as it comes back for a second try.
        await waitFor(
          'the message to be dead-lettered',
          async () => receives.count(messageId) > 1 || (await queueDepth(stack, stack.queueUrl)) === 0,
          10_000,
          50,
        );
      } finally {
        receives.stop();
      }

      expect(receives.count(messageId)).toBe(1);
      const copies = (await drainQueue(stack, stack.deadLetterUrl)).filter((m) => m.attributes['sluice-messageId'] === messageId);
      expect(copies).toHaveLength(1);
      const { attributes, body: kept } = copies[0]!;
      expect(attributes['sluice-reason']).toMatch(/bytes; a job spec may be at most 65536/);
      expect(attributes['sluice-truncated-from']).toBe(String(Buffer.byteLength(body)));
      expect(body.startsWith(kept)).toBe(true);
      // As SQS counts it: body, and each attribute's name, type and value.
      const attributeBytes = Object.entries(attributes).reduce((sum, [name, value]) => sum + Buffer.byteLength(name + 'String' + value), 0);
      expect(Buffer.byteLength(kept) + attributeBytes).toBe(1024 * 1024);
    }),
  30_000,
);

/**
 * For a body that starts with a character above U+FFFF, V8's JSON.parse message quotes a lone surrogate, which SQS
 * refuses in an attribute: the dead-letter send would fail and the message loop to maxReceiveCount. fauxqs refuses emoji
 * in bodies (real SQS does not), so this test calls the stack's acquirer with the body SQS would deliver and checks the
 * request it makes to the DLQ, not fauxqs' answer.
 */
test('a reason quoting a character above U+FFFF is still a valid SQS attribute', async () => {
  const messageId = 'emoji-message-1';
  const capture = captureSends(stack, stack.deadLetterUrl);
  try {
    await container()
      .acquirer.process({ messageId, body: '\u{1F600}\u{1F600} is not a job' })
      .catch(() => undefined); // fauxqs refuses the emoji body itself; what matters is what was asked of SQS
  } finally {
    capture.stop();
  }

  const sends = capture.sends().filter((send) => send.attributes['sluice-messageId'] === messageId);
  expect(sends).toHaveLength(1);
  const reason = sends[0]!.attributes['sluice-reason']!;
  expect(reason).toMatch(/not JSON/);
  expect((reason as string & { isWellFormed(): boolean }).isWellFormed()).toBe(true);
  expect(reason).toMatch(/^[\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]*$/u);
}, 30_000);

describe('malformed completion events', () => {
  const DIRECT = 'test-direct-to-releaser';
  const context = createLambdaContext({
    functionName: 'sluice-local-releaser',
    timeoutMs: 30_000,
    region: 'us-east-1',
    accountId: '000000000000',
  });
  let corpus: BadEvent[];
  let ids: string[];

  // Nothing but the malformed events may move a pool or a job item while they are checked, however long that takes on
  // this machine: the two runs they name lose their own end events (the simulator drops the next one of each kind) and
  // the reconciler, which would find those runs ended through the job API, waits for the test.
  let resume: () => void;

  beforeAll(async () => {
    resume = pauseReconciler();
    stack.simulator.setFaults({ appflow: { dropEvents: 1 }, glue: { dropEvents: 1 } });
    // Two runs Sluice records as running, that the events name; they must go on untouched.
    const specs = [goodJob('evt', 0), goodJob('evt', 1)];
    ids = specs.map((s) => s.id);
    for (const spec of specs) await sendRaw(stack, JSON.stringify(spec));
    await waitFor(
      'both runs recorded',
      async () => (await Promise.all(ids.map((id) => jobRecord(stack, id)))).every((r) => r?.state === JobState.Running),
      30_000,
    );
    const running = [...runsOf(stack, ids).values()].map(([run]) => run!);
    const flow = running.find((r) => r.kind === 'appflow')!;
    const glue = running.find((r) => r.kind === 'glue')!;
    corpus = badEvents({
      appflow: { flowName: flow.name, executionId: flow.executionId },
      glue: { jobName: glue.name, executionId: glue.executionId },
      tag: 'evt',
    });
    // On AWS the rules filter these out; here they are handed to the releaser itself, to see it shrug them off.
    stack.bus.addRule({ name: DIRECT, pattern: { resources: [DIRECT] }, target: (event) => releaser(event, context) });
  }, 60_000);
  afterAll(() => {
    resume();
    stack.simulator.clearFaults();
    stack.bus.removeRule(DIRECT);
  });

  /**
   * What a completion event can move: pools (counters, waiters, tenants, the registry), jobs, runs and job sets. Not
   * the loader's cursor (pk LOADER), which the scheduled loader moves on its own as the minutes pass.
   */
  const sluiceItems = async () =>
    (await scanTable(stack)).filter((item) => /^(POOL#|POOLS$|JOB#|RUN#|SET#|SETRUNS$)/.test(String(item.pk)));

  async function deliver(events: BadEvent[]) {
    const before = await sluiceItems();
    const put = events.map((bad) => ({
      bad,
      id: stack.bus.put({ ...bad.event, ...(bad.route === 'direct' && { resources: [DIRECT] }) }).id,
    }));
    await stack.bus.drain();
    const after = await sluiceItems();
    const deliveries = stack.bus.deliveries();
    const attempts = put.map(({ bad, id }) => ({
      name: bad.name,
      deliveries: deliveries
        .filter((d) => d.eventId === id)
        .map((d) => ({ toReleaser: d.rule.startsWith('releaser-') || d.rule === DIRECT, ok: d.ok, attempts: d.attempts })),
    }));
    return { before, after, attempts };
  }

  const THROW_LOOPS = ['AppFlow report with a 3,000-character execution-id', 'Glue SUCCEEDED with a 3,000-character jobRunId'];

  test('change nothing, and each is delivered once, successfully (no retries)', async () => {
    const events = corpus.filter((e) => !THROW_LOOPS.includes(e.name));
    expect(events.length).toBeGreaterThanOrEqual(20);

    const { before, after, attempts } = await deliver(events);

    expect(attempts).toEqual(events.map((e) => ({ name: e.name, deliveries: [{ toReleaser: true, ok: true, attempts: 1 }] })));
    // Well-formed completions of runs Sluice never recorded are kept as early-completion notes (in case their acquirer
    // records the run later); notes are not runs, and nothing else changed.
    const notes = after.filter((item) => item.earlyCompletion !== undefined);
    expect(notes.every((note) => String(note.pk).startsWith('RUN#') && note.jobId === undefined)).toBe(true);
    expect(after.filter((item) => !notes.includes(item))).toEqual(before);
    // The jobs the events named are still running, holding their slots...
    expect(after.filter((item) => ids.some((id) => item.pk === `JOB#${id}`)).map((item) => item.state)).toEqual([
      JobState.Running,
      JobState.Running,
    ]);
    expect(after.find((item) => item.pk === 'POOL#evt' && item.sk === 'POOL')).toMatchObject({ inUse: 2 });
    // ...and end once each, their slots freed, when the reconciler finds their runs ended (their own events were lost).
    const runs = stack.simulator.runs().filter((r) => r.group === 'evt');
    await waitFor('both runs to end, their events lost', () =>
      runs.every((run) => stack.simulator.droppedEvents().some((e) => e.executionId === run.executionId)),
    );
    expect((await reconcilePass(stack)).drift[Drift.LostEvent]).toBe(2);
    await expectEveryJobRanOnce(stack, { pool: 'evt', limit: POOLS.evt, ids });
  }, 60_000);

  /**
   * An id over 2,048 bytes would make findRun's GetItem key too large: DynamoDB answers ValidationException and the
   * event would be retried for nothing. Ids are capped in the schema, so such an event is malformed: logged, dropped.
   */
  test('with a run id too long for a DynamoDB key are dropped, not retried', async () => {
    const events = corpus.filter((e) => THROW_LOOPS.includes(e.name));
    const { before, after, attempts } = await deliver(events);
    expect(after).toEqual(before);
    expect(attempts).toEqual(events.map((e) => ({ name: e.name, deliveries: [{ toReleaser: true, ok: true, attempts: 1 }] })));
  }, 30_000);
});
