import { randomUUID } from 'node:crypto';
import { type Harness, perJob, startHarness } from '../../bench/harness';
import { makeJobs } from '../../bench/workload';
import { waitFor } from '../support/waitFor';

/**
 * The bench's tracer sees every call of Sluice's clients from the stack's first moment: the pollers start long polls
 * as soon as the stack is up, and a tracer added after that missed the messages the first poll returned (a scenario
 * run first waited for ten jobs it never saw arrive: the burst, alone, timed out at 10,000 minus one batch).
 */
let h: Harness;
beforeAll(async () => {
  const sqs = process.env.SLUICE_TEST_SQS_ENDPOINT;
  const dynamodb = process.env.SLUICE_TEST_DYNAMODB_ENDPOINT;
  if (!sqs || !dynamodb) throw new Error('needs the emulators of test/integration/setup/globalSetup.ts');
  h = await startHarness({
    pools: { 'harness-first': 2 },
    endpoints: { sqs, dynamodb },
    nameSuffix: `-harness-${randomUUID().slice(0, 8)}`,
    log: () => undefined,
  });
}, 60_000);
afterAll(() => h?.stop());

test('jobs sent the moment the stack is up are all seen received', async () => {
  const jobs = makeJobs({ group: 'harness-first', pool: 'harness-first', durations: Array.from({ length: 30 }, () => 20), tag: 'h' });
  await h.enqueue(jobs);

  await waitFor('every job seen received by the tracer', () => jobs.every((job) => h.tracer.receives.has(job.spec.id)), 20_000);
}, 30_000);

test('each job that ends files one entry on the ended index, and the write units per job count it', async () => {
  await h.settle('harness-first'); // the jobs of the test above end first
  const before = h.snapshot();
  const jobs = makeJobs({ group: 'harness-ended', pool: 'harness-first', durations: Array.from({ length: 10 }, () => 20), tag: 'e' });
  await h.enqueue(jobs);
  const entries = () =>
    h.tracer.endedIndexWrites + h.tracer.endedIndexWritesInTransactions - before.endedIndexWrites - before.endedIndexWritesInTransactions;
  await waitFor('every job filed on the ended index', () => entries() >= jobs.length, 30_000);
  await h.settle('harness-first');
  const after = h.snapshot();
  expect(entries()).toBe(jobs.length);
  expect(jobs.every((job) => h.tracer.endedJobs.has(job.spec.id))).toBe(true);
  // A release at a counted pool is a transaction: its ended entry is counted at a transaction's rate (2 units); the
  // write units per job are those without the index plus exactly these.
  const inTransactions = after.endedIndexWritesInTransactions - before.endedIndexWritesInTransactions;
  const plain = after.endedIndexWrites - before.endedIndexWrites;
  expect(inTransactions).toBeGreaterThan(0);
  const withoutEnded = {
    ...after,
    endedIndexWrites: before.endedIndexWrites,
    endedIndexWritesInTransactions: before.endedIndexWritesInTransactions,
  };
  expect(perJob(before, after, 1).dynamodbWriteUnits - perJob(before, withoutEnded, 1).dynamodbWriteUnits).toBeCloseTo(
    2 * inTransactions + plain,
    5,
  );
}, 60_000);

test("the reconciler's snapshot counts the calls of the reconciler runs alone, not the jobs' meanwhile", async () => {
  await h.settle('harness-first');
  const all = h.snapshot();
  const own = h.snapshot('reconciler');
  const jobs = makeJobs({ group: 'harness-recon', pool: 'harness-first', durations: Array.from({ length: 5 }, () => 20), tag: 'r' });
  await h.enqueue(jobs);
  await waitFor(
    'every job ended',
    () => h.runsOf('harness-recon').filter((run) => run.endedAt !== undefined).length >= jobs.length,
    30_000,
  );
  await h.settle('harness-first');
  await h.reconcileNow();
  const jobsAndRun = perJob(all, h.snapshot(), 1);
  const runAlone = perJob(own, h.snapshot('reconciler'), 1);
  // The jobs' arrivals, takes and releases are in the whole count, not in the reconciler's.
  expect(jobsAndRun.ops['dynamodb.TransactWriteItems']).toBeGreaterThan(0);
  expect(jobsAndRun.ops['lambda.releaser']).toBeGreaterThan(0);
  expect(runAlone.ops['lambda.reconciler']).toBe(1);
  expect(runAlone.ops['dynamodb.Query']).toBeGreaterThan(0); // its look at the registry of pools, at least
  expect(runAlone.ops['dynamodb.TransactWriteItems']).toBeUndefined();
  expect(runAlone.ops['sqs.ReceiveMessage']).toBeUndefined();
  expect(runAlone.ops['lambda.releaser']).toBe(0);
}, 60_000);
