import { LocalEventBus, type BusEvent, type BusEventInput, type DeliveryAttempt } from '../../../local/bus';

const appflowEnd = (executionId: string): BusEventInput => ({
  source: 'aws.appflow',
  'detail-type': 'AppFlow End Flow Run Report',
  detail: { 'execution-id': executionId, status: 'Execution Successful' },
});
const glueChange = (state: string): BusEventInput => ({
  source: 'aws.glue',
  'detail-type': 'Glue Job State Change',
  detail: { jobRunId: 'jr_1', state },
});

let bus: LocalEventBus;
afterEach(() => bus.close());

/** A target that records what it receives. */
function recorder() {
  const got: BusEvent[] = [];
  return { got, target: async (event: BusEvent) => void got.push(event) };
}

test('delivers asynchronously, only to the rules whose pattern matches, with a full envelope', async () => {
  let clock = Date.parse('2026-03-01T10:00:00.123Z');
  bus = new LocalEventBus({ now: () => clock++ });
  const appflow = recorder();
  const glue = recorder();
  const everything = recorder();
  bus.addRule({
    name: 'appflow',
    pattern: { source: ['aws.appflow'], 'detail-type': ['AppFlow End Flow Run Report'] },
    target: appflow.target,
  });
  bus.addRule({
    name: 'glue-terminal',
    pattern: { source: ['aws.glue'], detail: { state: ['SUCCEEDED', 'FAILED'] } },
    target: glue.target,
  });
  bus.addRule({ name: 'all-aws', pattern: { source: [{ prefix: 'aws.' }] }, target: everything.target });

  const put = bus.put(appflowEnd('e1'));
  bus.put(glueChange('RUNNING'));
  bus.put(glueChange('FAILED'));
  expect(appflow.got).toHaveLength(0); // PutEvents returns before any target runs
  await bus.drain();

  expect(appflow.got).toEqual([put]);
  expect(put).toMatchObject({
    version: '0',
    account: '000000000000',
    region: 'us-east-1',
    time: '2026-03-01T10:00:00Z', // second precision, like EventBridge
    resources: [],
    detail: { 'execution-id': 'e1' },
  });
  expect(put.id).toMatch(/^[0-9a-f-]{36}$/);
  expect(glue.got.map((e) => (e.detail as { state: string }).state)).toEqual(['FAILED']);
  expect(everything.got).toHaveLength(3);
  expect(bus.deliveries().filter((d) => d.rule === 'appflow')).toEqual([
    expect.objectContaining({ eventId: put.id, attempts: 1, ok: true, putAt: Date.parse('2026-03-01T10:00:00.123Z') }),
  ]);
  expect(bus.stats()).toMatchObject({ put: 3, succeeded: 5, failed: 0, pending: 0 }); // 1 + 1 + 3
});

test('each target gets its own copy of the event', async () => {
  bus = new LocalEventBus();
  const second = recorder();
  bus.addRule({
    name: 'mutator',
    pattern: { source: ['aws.glue'] },
    target: async (e) => void ((e.detail as { state: string }).state = 'X'),
  });
  bus.addRule({ name: 'reader', pattern: { source: ['aws.glue'] }, target: second.target });
  bus.put(glueChange('FAILED'));
  await bus.drain();
  expect(second.got[0]?.detail).toEqual({ jobRunId: 'jr_1', state: 'FAILED' });
});

test('retries a failing target with backoff until it succeeds', async () => {
  const attempts: DeliveryAttempt[] = [];
  bus = new LocalEventBus({ baseDelayMs: 5, onDeliver: (a) => attempts.push(a) });
  let calls = 0;
  bus.addRule({
    name: 'flaky',
    pattern: { source: ['aws.appflow'] },
    target: async () => {
      if (++calls < 3) throw new Error(`throttled ${calls}`);
    },
  });
  const event = bus.put(appflowEnd('e1'));
  await bus.drain();
  expect(calls).toBe(3);
  expect(attempts.map((a) => a.attempt)).toEqual([1, 2, 3]);
  // the 2nd retry waits 5-10 ms (10 ms with jitter); 1 ms of slack for Date.now rounding
  expect(attempts[2]!.startedAt - attempts[1]!.startedAt).toBeGreaterThanOrEqual(4);
  expect(bus.deliveries()).toEqual([expect.objectContaining({ rule: 'flaky', eventId: event.id, attempts: 3, ok: true })]);
  expect(bus.stats()).toMatchObject({ attempts: 3, retries: 2, succeeded: 1, failed: 0 });
});

test('gives up after maxAttempts and records the failure', async () => {
  bus = new LocalEventBus({ maxAttempts: 3, baseDelayMs: 1 });
  bus.addRule({ name: 'broken', pattern: { source: ['aws.appflow'] }, target: () => Promise.reject(new Error('target down')) });
  bus.put(appflowEnd('e1'));
  await bus.drain();
  expect(bus.deliveries()).toEqual([expect.objectContaining({ attempts: 3, ok: false, error: 'target down' })]);
  expect(bus.stats()).toMatchObject({ failed: 1, retries: 2 });
});

test('dropNext loses whole events; duplicateNext delivers them twice with the same id', async () => {
  bus = new LocalEventBus();
  const target = recorder();
  bus.addRule({ name: 'appflow', pattern: { source: ['aws.appflow'] }, target: target.target });

  bus.setFaults({ dropNext: 2 });
  bus.put(appflowEnd('lost-1'));
  bus.put(appflowEnd('lost-2'));
  const kept = bus.put(appflowEnd('kept'));
  await bus.drain();
  expect(target.got.map((e) => e.id)).toEqual([kept.id]);

  bus.setFaults({ duplicateNext: 1 });
  const twice = bus.put(appflowEnd('twice'));
  const once = bus.put(appflowEnd('once'));
  await bus.drain();
  expect(target.got.slice(1).map((e) => e.id)).toEqual([twice.id, twice.id, once.id]);
  expect(bus.stats()).toMatchObject({ put: 5, dropped: 2, duplicated: 1, succeeded: 4 });
});

test('faults aimed at some sources leave the others alone', async () => {
  bus = new LocalEventBus();
  const target = recorder();
  bus.addRule({ name: 'all', pattern: { source: ['aws.appflow', 'sluice'] }, target: target.target });
  bus.setFaults({ dropNext: 1, sources: ['aws.appflow'] });
  const own = bus.put({ source: 'sluice', 'detail-type': 'Sluice Job Ended', detail: { jobId: 'j' } });
  bus.put(appflowEnd('lost'));
  const kept = bus.put(appflowEnd('kept'));
  await bus.drain();
  expect(target.got.map((e) => e.id)).toEqual([own.id, kept.id]);
});

test('onDeliver measures from put to target start with the injected clock', async () => {
  let clock = 1_000;
  const latencies: number[] = [];
  bus = new LocalEventBus({ now: () => clock, onDeliver: (a) => latencies.push(a.startedAt - a.putAt) });
  bus.addRule({ name: 'r', pattern: { source: ['aws.appflow'] }, target: async () => undefined });
  bus.put(appflowEnd('e1'));
  clock += 7;
  await bus.drain();
  expect(latencies).toEqual([7]);
  expect(bus.deliveries()[0]).toMatchObject({ putAt: 1_000, firstAttemptAt: 1_007, deliveredAt: 1_007 });
});

test('drain() also waits for events that targets put', async () => {
  bus = new LocalEventBus();
  const end = recorder();
  bus.addRule({ name: 'relay', pattern: { source: ['aws.glue'] }, target: async () => void bus.put(appflowEnd('relayed')) });
  bus.addRule({ name: 'end', pattern: { source: ['aws.appflow'] }, target: end.target });
  bus.put(glueChange('FAILED'));
  await bus.drain();
  expect(end.got).toHaveLength(1);
  expect(bus.stats().pending).toBe(0);
});

test('close() abandons waiting retries, waits for running targets, and refuses new events', async () => {
  bus = new LocalEventBus({ baseDelayMs: 60_000 }); // a retry that would wait a minute
  let release!: () => void;
  const running = new Promise<void>((resolve) => (release = resolve));
  let slowDone = false;
  let started!: () => void;
  const slowStarted = new Promise<void>((resolve) => (started = resolve));
  bus.addRule({ name: 'failing', pattern: { source: ['aws.glue'] }, target: () => Promise.reject(new Error('down')) });
  bus.addRule({
    name: 'slow',
    pattern: { source: ['aws.appflow'] },
    target: async () => {
      started();
      await running;
      slowDone = true;
    },
  });
  bus.put(glueChange('FAILED'));
  bus.put(appflowEnd('e1'));
  await slowStarted;

  const closed = bus.close();
  expect(() => bus.put(appflowEnd('late'))).toThrow('closed');
  release();
  await closed; // resolves without waiting a minute for the retry
  expect(slowDone).toBe(true);
  expect(bus.deliveries()).toEqual(
    expect.arrayContaining([
      expect.objectContaining({ rule: 'failing', ok: false, attempts: 1, error: 'the bus closed before a retry; last error: down' }),
      expect.objectContaining({ rule: 'slow', ok: true }),
    ]),
  );
  await bus.drain(); // nothing left
});

test('addRule rejects an invalid pattern and a duplicate name', () => {
  bus = new LocalEventBus();
  expect(() => bus.addRule({ name: 'bad', pattern: { source: 'aws.glue' }, target: async () => undefined })).toThrow('must be an array');
  bus.addRule({ name: 'r', pattern: { source: ['aws.glue'] }, target: async () => undefined });
  expect(() => bus.addRule({ name: 'r', pattern: { source: ['aws.glue'] }, target: async () => undefined })).toThrow('already exists');
});
