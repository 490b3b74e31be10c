import type { LocalStack } from '../../local/stack';
import { loseAnswers } from '../../local/faults/lostAnswers';
import { type ControlledEmulators, spawnControlledEmulators } from '../support/controlledEmulators';
import { expectEveryJobRanOnce, runsOf, waitForRunning } from '../support/invariants';
import { enqueue } from '../support/testStack';
import { waitFor } from '../support/waitFor';
import { jobsFor, startFaultStack } from './workload';

/**
 * The SQS or DynamoDB endpoint goes away mid-run and comes back with its data (a restart of a durable service, a
 * network partition): this file's own emulators restart their listeners on the same ports, keeping queues, messages,
 * tables and items (local/emulators.ts). Calls fail meanwhile (connection refused after the SDK's retries):
 * acquirers fail their batch (the messages come back), releases fail (the bus retries, then the event is lost), the
 * reconciler skips a round. And a request applied whose answer is lost is retried by the SDK into its own effect.
 */
const POOLS = { ddbdown: 3, sqsdown: 3, bothdown: 3, lostanswers: 2 };

let emulators: ControlledEmulators;
let stack: LocalStack;
const errors: Record<string, number> = {};
beforeAll(async () => {
  emulators = await spawnControlledEmulators();
  // This file's stack and the test's own clients use these emulators, not the shared ones (each file has its own env).
  process.env.SLUICE_TEST_SQS_ENDPOINT = emulators.sqsEndpoint;
  process.env.SLUICE_TEST_DYNAMODB_ENDPOINT = emulators.dynamodbEndpoint;
  stack = await startFaultStack(POOLS, {
    emulatorControl: emulators,
    onHandlerError: (name) => void (errors[name] = (errors[name] ?? 0) + 1),
    onPollerError: (_error, source) => void (errors[`poller-${source}`] = (errors[`poller-${source}`] ?? 0) + 1),
  });
}, 60_000);
afterAll(async () => {
  await stack?.stop();
  await emulators?.stop();
});

const failedCalls = () => Object.values(errors).reduce((a, b) => a + b, 0);

test('DynamoDB goes away for 1.5 s while jobs run and wait', async () => {
  const before = failedCalls();
  const ids = await enqueue(
    stack,
    jobsFor('ddbdown', 12, (i) => 400 + (i % 4) * 200),
  );
  await waitForRunning(stack, 'ddbdown', 3);

  await stack.faults.restartEmulators('dynamodb', { downMs: 1_500 });

  await expectEveryJobRanOnce(stack, { pool: 'ddbdown', limit: POOLS.ddbdown, ids, timeoutMs: 60_000 });
  expect(failedCalls()).toBeGreaterThan(before); // the outage did hit the functions
}, 90_000);

test('SQS goes away for 1.5 s while jobs run and wait', async () => {
  const ids = await enqueue(
    stack,
    jobsFor('sqsdown', 12, (i) => 400 + (i % 4) * 200),
  );
  await waitForRunning(stack, 'sqsdown', 3);
  const before = errors['poller-receive'] ?? 0;

  await stack.faults.restartEmulators('sqs', { downMs: 1_500 });

  await expectEveryJobRanOnce(stack, { pool: 'sqsdown', limit: POOLS.sqsdown, ids, timeoutMs: 60_000 });
  expect(errors['poller-receive'] ?? 0).toBeGreaterThan(before); // the pollers did find SQS gone
}, 90_000);

test('both go away twice, cutting the requests in flight, while jobs run and wait', async () => {
  const ids = await enqueue(
    stack,
    jobsFor('bothdown', 15, (i) => 300 + (i % 5) * 150),
  );
  await waitForRunning(stack, 'bothdown', 3);

  await stack.faults.restartEmulators('both', { downMs: 800, dropConnections: true });
  await waitFor('more jobs to start', () => runsOf(stack, ids).size >= 8, 30_000, 10);
  await stack.faults.restartEmulators('both', { downMs: 800, dropConnections: true });

  await expectEveryJobRanOnce(stack, { pool: 'bothdown', limit: POOLS.bothdown, ids, timeoutMs: 60_000 });
}, 90_000);

test('conditional writes applied whose answers are lost (the SDK retries into its own write): nothing is lost or leaked', async () => {
  // Every other conditional write of the table (slot changes, which are transactions, and ledger moves) loses its
  // answer once, 15 in all (every third no longer reached 15: a first delivery's register now goes with its take). dynalite ignores a transaction's ClientRequestToken, so the SDK's retry of an applied
  // transaction is cancelled by its own effect (the version moved on): the caller reads again and decides again.
  const loss = loseAnswers(stack.dynamodb, {
    match: (command, input) =>
      command === 'TransactWriteItemsCommand' ||
      (['UpdateItemCommand', 'PutItemCommand'].includes(command) && typeof input.ConditionExpression === 'string'),
    count: 15,
    every: 2,
  });
  try {
    const ids = await enqueue(
      stack,
      jobsFor('lostanswers', 10, (i) => 200 + (i % 3) * 100),
    );

    await expectEveryJobRanOnce(stack, { pool: 'lostanswers', limit: POOLS.lostanswers, ids, timeoutMs: 60_000 });

    expect(loss.lost()).toBe(15);
  } finally {
    loss.stop();
  }
}, 90_000);
