import { createHash } from 'node:crypto';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { Logger } from '@aws-lambda-powertools/logger';
import { SqsSchema } from '@aws-lambda-powertools/parser/schemas/sqs';
import type { Context, SQSEvent } from 'aws-lambda';
import { startSqsPoller, type SqsPoller, type SqsPollerOptions } from '../../../local/poller';
import { spawnEmulators, type SpawnedEmulators } from '../../support/spawnEmulators';
import { settlesWithin, waitFor } from './waitFor';

// Visibility timeouts (1 s) and batching windows (2-5 s) are real time here.
jest.setTimeout(20_000);

let emulators: SpawnedEmulators;
let sqs: SQSClient;
beforeAll(async () => {
  emulators = await spawnEmulators();
  sqs = new SQSClient({ endpoint: emulators.sqsEndpoint, region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
});
afterAll(async () => {
  sqs?.destroy();
  await emulators?.stop();
});

interface Queue {
  queueUrl: string;
  queueArn: string;
}
let queues = 0;
async function createQueue(visibilityTimeoutSeconds = 30): Promise<Queue> {
  const { QueueUrl } = await sqs.send(
    new CreateQueueCommand({ QueueName: `poller-${++queues}`, Attributes: { VisibilityTimeout: String(visibilityTimeoutSeconds) } }),
  );
  const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }));
  return { queueUrl: QueueUrl!, queueArn: Attributes!.QueueArn! };
}

async function send(queue: Queue, bodies: string[]): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < bodies.length; i += 10) {
    const { Successful = [] } = await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: queue.queueUrl,
        Entries: bodies.slice(i, i + 10).map((MessageBody, n) => ({ Id: String(n), MessageBody })),
      }),
    );
    ids.push(...Successful.sort((a, b) => Number(a.Id) - Number(b.Id)).map((s) => s.MessageId!));
  }
  return ids;
}

/** Messages still in the queue, visible or in flight. */
async function messagesLeft(queue: Queue): Promise<number> {
  const { Attributes = {} } = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: queue.queueUrl,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    }),
  );
  return Number(Attributes.ApproximateNumberOfMessages) + Number(Attributes.ApproximateNumberOfMessagesNotVisible);
}

interface Invocation {
  event: SQSEvent;
  context: Context;
  at: number;
}

const pollers: SqsPoller[] = [];
afterEach(async () => {
  await Promise.all(pollers.splice(0).map((p) => p.stop()));
});

/** Starts a poller whose handler is `respond`; records invocations and errors. One poller unless told otherwise. */
function poll(queue: Queue, respond: SqsPollerOptions['handler'], options: Partial<SqsPollerOptions> = {}) {
  const invocations: Invocation[] = [];
  const errors: Array<{ error: unknown; source: string }> = [];
  const poller = startSqsPoller({
    client: sqs,
    ...queue,
    concurrency: 1,
    handler: async (event, context) => {
      invocations.push({ event, context, at: Date.now() });
      return respond(event, context);
    },
    onError: (error, source) => errors.push({ error, source }),
    ...options,
  });
  pollers.push(poller);
  return { poller, invocations, errors };
}

/**
 * With a 1 s visibility timeout the batching window must be shorter, or a message received early in the window
 * becomes visible again and is received a second time into the same batch (as it would on AWS: keep the queue's
 * visibility timeout above function timeout + window).
 */
const WINDOW_UNDER_VISIBILITY = 500;

const ids = (invocation: Invocation | undefined) => invocation?.event.Records.map((r) => r.messageId);
const md5 = (s: string) => createHash('md5').update(s).digest('hex');

test("records have Lambda's shape; a redelivered message has a higher ApproximateReceiveCount", async () => {
  const queue = await createQueue(1);
  const { MessageId } = await sqs.send(
    new SendMessageCommand({
      QueueUrl: queue.queueUrl,
      MessageBody: '{"job":"j1"}',
      MessageAttributes: {
        pool: { DataType: 'String', StringValue: 'default' },
        priority: { DataType: 'Number', StringValue: '5' },
        blob: { DataType: 'Binary', BinaryValue: Buffer.from('hi') },
      },
    }),
  );
  const { invocations, poller, errors } = poll(queue, async () => {
    if (invocations.length === 1) throw new Error('first attempt fails');
  });
  await waitFor(() => poller.stats.deletes === 1, 10_000, 'the second attempt to succeed');

  const [first, second] = invocations.map((i) => i.event.Records[0]!);
  expect(() => SqsSchema.parse(invocations[0]!.event)).not.toThrow(); // Powertools' own schema of the Lambda event
  expect(first).toEqual({
    messageId: MessageId,
    receiptHandle: expect.any(String),
    body: '{"job":"j1"}',
    attributes: {
      ApproximateReceiveCount: '1',
      SentTimestamp: expect.stringMatching(/^\d{13}$/),
      SenderId: expect.any(String),
      ApproximateFirstReceiveTimestamp: expect.stringMatching(/^\d{13}$/),
    },
    messageAttributes: {
      pool: { stringValue: 'default', stringListValues: [], binaryListValues: [], dataType: 'String' },
      priority: { stringValue: '5', stringListValues: [], binaryListValues: [], dataType: 'Number' },
      blob: { binaryValue: Buffer.from('hi').toString('base64'), stringListValues: [], binaryListValues: [], dataType: 'Binary' },
    },
    md5OfMessageAttributes: expect.stringMatching(/^[0-9a-f]{32}$/),
    md5OfBody: md5('{"job":"j1"}'),
    eventSource: 'aws:sqs',
    eventSourceARN: queue.queueArn,
    awsRegion: 'us-east-1',
  });
  expect(second).toMatchObject({ messageId: MessageId, attributes: { ApproximateReceiveCount: '2' } });
  expect(second!.receiptHandle).not.toBe(first!.receiptHandle);
  expect(second!.attributes.ApproximateFirstReceiveTimestamp).toBe(first!.attributes.ApproximateFirstReceiveTimestamp);
  expect(errors).toEqual([{ error: new Error('first attempt fails'), source: 'handler' }]);
  expect(poller.stats).toMatchObject({ invocations: 2, failed: 1, succeeded: 1, deletes: 1 });
  await waitFor(async () => (await messagesLeft(queue)) === 0, 5_000, 'an empty queue');
});

test('a thrown handler deletes none: the whole batch comes back', async () => {
  const queue = await createQueue(1);
  const sent = await send(queue, ['a', 'b', 'c']);
  const { invocations, poller } = poll(
    queue,
    async () => {
      if (invocations.length === 1) throw new Error('boom');
    },
    { batchSize: 3, maximumBatchingWindowMs: WINDOW_UNDER_VISIBILITY },
  );
  await waitFor(() => poller.stats.deletes === 3, 10_000, 'the retry to delete all three');
  expect(invocations.map((i) => ids(i)?.sort())).toEqual([[...sent].sort(), [...sent].sort()]);
  expect(invocations[1]!.event.Records.map((r) => r.attributes.ApproximateReceiveCount)).toEqual(['2', '2', '2']);
  expect(poller.stats).toMatchObject({ failed: 1, deletes: 3 });
});

test('a partial batch failure deletes the others; the failed message comes back after its visibility timeout', async () => {
  const queue = await createQueue(1);
  const [a, b, c] = await send(queue, ['a', 'b', 'c']);
  const { invocations, poller } = poll(
    queue,
    async () => (invocations.length === 1 ? { batchItemFailures: [{ itemIdentifier: b! }] } : undefined),
    { batchSize: 3, maximumBatchingWindowMs: WINDOW_UNDER_VISIBILITY },
  );
  await waitFor(() => invocations.length === 2 && poller.stats.deletes === 3, 10_000, 'the failed message to come back');

  expect(ids(invocations[0])?.sort()).toEqual([a, b, c].sort());
  expect(ids(invocations[1])).toEqual([b]);
  expect(invocations[1]!.event.Records[0]!.attributes.ApproximateReceiveCount).toBe('2');
  // The poller does not make the failed message visible again: it waits out the queue's 1 s visibility timeout.
  expect(invocations[1]!.at - invocations[0]!.at).toBeGreaterThanOrEqual(900);
  expect(poller.stats).toMatchObject({ partiallyFailed: 1, succeeded: 1 });
  await waitFor(async () => (await messagesLeft(queue)) === 0, 5_000, 'an empty queue');
});

test('an unknown itemIdentifier fails the whole batch', async () => {
  const queue = await createQueue(1);
  const sent = await send(queue, ['a', 'b']);
  const { invocations, poller } = poll(
    queue,
    async () => (invocations.length === 1 ? { batchItemFailures: [{ itemIdentifier: 'not-in-this-batch' }] } : undefined),
    { batchSize: 2, maximumBatchingWindowMs: WINDOW_UNDER_VISIBILITY },
  );
  await waitFor(() => poller.stats.deletes === 2, 10_000, 'the retry to delete both');
  expect(ids(invocations[1])?.sort()).toEqual([...sent].sort());
  expect(poller.stats).toMatchObject({ invocations: 2, failed: 1 });
});

test('batches never exceed batchSize, across parallel pollers', async () => {
  const queue = await createQueue();
  const sent = await send(
    queue,
    Array.from({ length: 10 }, (_, i) => `m${i}`),
  );
  const { invocations, poller } = poll(queue, async () => undefined, { batchSize: 4, concurrency: 2 });
  await waitFor(() => poller.stats.deletes === 10, 10_000, 'all ten to be deleted');
  expect(Math.max(...invocations.map((i) => i.event.Records.length))).toBeLessThanOrEqual(4);
  expect(invocations.flatMap((i) => ids(i)!).sort()).toEqual([...sent].sort());
});

test('a batchSize above 10 gathers several receives into one invocation', async () => {
  const queue = await createQueue();
  await send(
    queue,
    Array.from({ length: 25 }, (_, i) => `m${i}`),
  );
  const { invocations, poller } = poll(queue, async () => undefined, { batchSize: 25, maximumBatchingWindowMs: 5_000 });
  await waitFor(() => poller.stats.deletes === 25, 10_000, 'all 25 to be deleted');
  expect(invocations.map((i) => i.event.Records.length)).toEqual([25]);
  expect(poller.stats.receives).toBeGreaterThanOrEqual(3);
});

test('messages that arrive within the batching window join the batch', async () => {
  const queue = await createQueue();
  await send(queue, ['early']);
  const { invocations, poller } = poll(queue, async () => undefined, { batchSize: 10, maximumBatchingWindowMs: 1_500 });
  await waitFor(() => poller.stats.messages === 1, 5_000, 'the first message to be received');
  await send(queue, ['late-1', 'late-2']);
  await waitFor(() => invocations.length === 1, 10_000, 'the window to end');
  expect(invocations[0]!.event.Records.map((r) => r.body).sort()).toEqual(['early', 'late-1', 'late-2']);
});

test('the context works with Powertools Logger and counts down from the function timeout', async () => {
  const queue = await createQueue();
  await send(queue, ['x']);
  const lines: string[] = [];
  const write = jest.spyOn(process.stdout, 'write').mockImplementation((chunk) => (lines.push(String(chunk)), true));
  let remaining = -1;
  let askedAt = -1;
  const logger = new Logger({ serviceName: 'sluice-test' });
  const begun = Date.now();
  try {
    const { invocations } = poll(
      queue,
      async (_, context) => {
        remaining = context.getRemainingTimeInMillis();
        askedAt = Date.now();
        logger.addContext(context);
        logger.info('handled');
      },
      { functionName: 'acquirer', functionTimeoutMs: 30_000, memoryLimitInMB: 512 },
    );
    await waitFor(() => invocations.length === 1, 10_000, 'an invocation');
    const { context } = invocations[0]!;
    expect(context).toMatchObject({
      functionName: 'acquirer',
      functionVersion: '$LATEST',
      memoryLimitInMB: '512',
      invokedFunctionArn: 'arn:aws:lambda:us-east-1:000000000000:function:acquirer',
      logGroupName: '/aws/lambda/acquirer',
    });
    expect(context.awsRequestId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    // Counting down from the function's timeout, from when the invocation began (after `begun`): on a busy machine
    // the handler may be asked a while after, so the bound is what has passed since then, not a fixed second.
    expect(remaining).toBeGreaterThanOrEqual(30_000 - (askedAt - begun));
    expect(remaining).toBeLessThanOrEqual(30_000);
    const log = JSON.parse(lines.find((l) => l.includes('"handled"'))!);
    expect(log).toMatchObject({ message: 'handled', function_name: 'acquirer', function_request_id: context.awsRequestId });
  } finally {
    write.mockRestore();
  }
});

test('a handler that outlives the function timeout fails its batch, and stop() still waits for it', async () => {
  const queue = await createQueue(30);
  await send(queue, ['slow']);
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const { poller, errors } = poll(queue, () => gate, { functionTimeoutMs: 100 });
  await waitFor(() => poller.stats.failed === 1, 5_000, 'the timeout');
  expect(errors[0]).toMatchObject({ source: 'handler', error: new Error('Task timed out after 0.10 seconds') });
  expect(poller.stats.deletes).toBe(0);

  const stopped = poller.stop();
  expect(await settlesWithin(stopped, 1_500)).toBe(false); // the idle long poll (1 s) has ended by now
  release();
  await stopped;
});

test('stop() waits for the batch in hand, then the poller takes nothing more', async () => {
  const queue = await createQueue();
  await send(queue, ['in-flight']);
  const log: string[] = [];
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const { poller, invocations } = poll(
    queue,
    async () => {
      await gate;
      log.push('handler done');
    },
    { concurrency: 3 },
  );
  await waitFor(() => invocations.length === 1, 5_000, 'the handler to start');

  const receivesAtStop = poller.stats.receives;
  const stopped = poller.stop().then(() => log.push('stopped'));
  await new Promise((resolve) => setImmediate(resolve));
  release();
  await stopped;
  expect(log).toEqual(['handler done', 'stopped']);
  expect(poller.stats.deletes).toBe(1); // the batch in hand was finished, deletes included
  // It waited for the long polls in flight (1 s when idle), and began none after stop(): not a time, a count.
  expect(poller.stats.receives).toBe(receivesAtStop);

  await send(queue, ['after-stop']);
  const { Messages = [] } = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queue.queueUrl, WaitTimeSeconds: 1 }));
  expect(Messages.map((m) => m.Body)).toEqual(['after-stop']);
  expect(poller.stats.invocations).toBe(1);
});
