import { randomUUID } from 'node:crypto';
import { type Harness, startHarness } from '../../bench/harness';
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
