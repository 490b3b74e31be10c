import { SendMessageCommand, SetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import type { ReconcileReport } from '../../shared/app/reconcile';
import { rateToMs } from '../../shared/local/infra/schedule';
import type { LocalStack } from '../../shared/local/stack';
import { container } from '../../shared/runtime/container';
import { poolItem, testClients } from './testStack';
import { waitFor } from './waitFor';

/**
 * Probes into a running local stack for the bad-input, lifecycle and fault tests: raw sends, who received what, the
 * whole table, the reconciler's period. They use the test's own clients, or watch the stack's clients without
 * changing what they do.
 */

/** Sends a body as is (no schema check, unlike enqueue) to the job queue; returns the SQS message id. */
export async function sendRaw(stack: LocalStack, body: string, queueUrl = stack.queueUrl): Promise<string> {
  const { MessageId } = await testClients(stack).sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: body }));
  return MessageId!;
}

/** Sets the job queue's redrive policy (to the stack's DLQ) to `maxReceiveCount`. */
export async function setMaxReceiveCount(stack: LocalStack, maxReceiveCount: number): Promise<void> {
  const deadLetterTargetArn = stack.refs.arn.DeadLetterQueue;
  if (!deadLetterTargetArn) throw new Error('the stack has no DeadLetterQueue');
  await testClients(stack).sqs.send(
    new SetQueueAttributesCommand({
      QueueUrl: stack.queueUrl,
      Attributes: { RedrivePolicy: JSON.stringify({ deadLetterTargetArn, maxReceiveCount }) },
    }),
  );
}

export interface DeliveryWatch {
  /** How often the stack's acquirer was handed the SQS message with this id. */
  count(messageId: string): number;
  /** The errors the acquirer failed messages with (the message then comes back after the visibility timeout). */
  errors(): unknown[];
  stop(): void;
}

/**
 * Counts the job messages the stack's acquirer processes, by SQS message id: each receive of a message is one
 * invocation for it, so a count of 1 means it was received once and never retried. (Wraps the acquirer in the
 * handlers' container: an SDK middleware would miss the long polls already in flight when it was added.)
 */
export function watchDeliveries(): DeliveryWatch {
  const counts = new Map<string, number>();
  const errors: unknown[] = [];
  const { acquirer } = container();
  const process = acquirer.process;
  acquirer.process = async (message) => {
    counts.set(message.messageId, (counts.get(message.messageId) ?? 0) + 1);
    try {
      return await process.call(acquirer, message);
    } catch (error) {
      errors.push(error);
      throw error;
    }
  };
  return {
    count: (id) => counts.get(id) ?? 0,
    errors: () => [...errors],
    stop: () => {
      acquirer.process = process;
    },
  };
}

let watchCounter = 0;

export interface CapturedSend {
  body: string;
  attributes: Record<string, string>;
}

/** Records what the stack's own SQS client sends to `queueUrl` (as the request is made, whether SQS accepts it or not). */
export function captureSends(stack: LocalStack, queueUrl: string): { sends(): CapturedSend[]; stop(): void } {
  const sends: CapturedSend[] = [];
  const name = `testCaptureSends${++watchCounter}`;
  stack.sqs.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { QueueUrl?: string; MessageBody?: string; MessageAttributes?: Record<string, { StringValue?: string }> };
      if (context.commandName === 'SendMessageCommand' && input.QueueUrl === queueUrl) {
        sends.push({
          body: input.MessageBody ?? '',
          attributes: Object.fromEntries(Object.entries(input.MessageAttributes ?? {}).map(([k, v]) => [k, v.StringValue ?? ''])),
        });
      }
      return next(args);
    },
    { step: 'initialize', name },
  );
  return { sends: () => [...sends], stop: () => void stack.sqs.middlewareStack.remove(name) };
}

/** Counts DynamoDB writes of the stack refused with ConditionalCheckFailedException (lost races, repeated moves). */
export function countConditionalFailures(stack: LocalStack): { count(): number; stop(): void } {
  let count = 0;
  const name = `testConditionalFailures${++watchCounter}`;
  stack.dynamodb.middlewareStack.add(
    (next) => async (args) => {
      try {
        return await next(args);
      } catch (error) {
        // A single write's failed condition, or a transaction cancelled by one (most slot changes are transactions).
        const { name: errorName, CancellationReasons } = error as { name?: string; CancellationReasons?: Array<{ Code?: string }> };
        if (errorName === 'ConditionalCheckFailedException') count++;
        else if (errorName === 'TransactionCanceledException' && CancellationReasons?.some((r) => r.Code === 'ConditionalCheckFailed'))
          count++;
        throw error;
      }
    },
    { step: 'initialize', name },
  );
  return { count: () => count, stop: () => void stack.dynamodb.middlewareStack.remove(name) };
}

/** Every item of the stack's table, sorted by key, for before/after comparisons. */
export async function scanTable(stack: LocalStack): Promise<Array<Record<string, unknown>>> {
  const items: Array<Record<string, unknown>> = [];
  let ExclusiveStartKey: Record<string, unknown> | undefined;
  do {
    const page = await testClients(stack).doc.send(
      new ScanCommand({ TableName: stack.tableName, ConsistentRead: true, ExclusiveStartKey }),
    );
    items.push(...(page.Items ?? []));
    ExclusiveStartKey = page.LastEvaluatedKey;
  } while (ExclusiveStartKey);
  const key = (item: Record<string, unknown>) => `${String(item.pk)}\u0000${String(item.sk)}`;
  return items.sort((a, b) => key(a).localeCompare(key(b)));
}

/** The reconciler's period on this stack: its schedule's rate times the local time scale (2 minutes x 0.02 = 2.4 s). */
export function reconcilePeriodMs(stack: LocalStack): number {
  for (const fn of Object.values(stack.definition.functions)) {
    for (const event of fn.events ?? []) {
      if (!('schedule' in event)) continue;
      const rate = typeof event.schedule === 'string' ? event.schedule : (event.schedule as { rate: string }).rate;
      return rateToMs(rate) * (stack.definition.custom?.local?.timeScale ?? 1);
    }
  }
  throw new Error('serverless.yml has no scheduled function');
}

/**
 * Waits until the pool holds no slot (inUse 0 and no holder) and fails if that has not happened by `deadline` (epoch
 * ms). The check is strict: `toMatchObject({ holders: {} })` would accept any holders.
 */
export async function waitForPoolIdle(stack: LocalStack, pool: string, deadline: number): Promise<void> {
  let last: unknown;
  await waitFor(
    `pool ${pool} to hold no slot by ${new Date(deadline).toISOString()}`,
    async () => {
      const item = await poolItem(stack, pool);
      last = item;
      return item !== undefined && item.inUse === 0 && Object.keys(item.holders ?? {}).length === 0;
    },
    Math.max(0, deadline - Date.now()),
    25,
  ).catch((error: Error) => {
    throw new Error(`${error.message}; pool was ${JSON.stringify(last)}`);
  });
}

/**
 * Stops the scheduled reconciler from doing anything until the returned function is called, so a test can show that a
 * path works without the safety net (the schedule still fires; each run returns an empty report).
 */
export function pauseReconciler(): () => void {
  const { reconciler } = container();
  const run = reconciler.run;
  reconciler.run = async (): Promise<ReconcileReport> => ({ pools: 0, holdersChecked: 0, unfinished: 0, drift: {} });
  return () => {
    reconciler.run = run;
  };
}

/** Samples a pool while a test runs and keeps the largest `inUse` seen (a monitor, not a synchronisation). */
export function samplePool(stack: LocalStack, pool: string, everyMs = 20): { maxInUse(): number; stop(): Promise<void> } {
  let max = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const item = await poolItem(stack, pool).catch(() => undefined);
      if (item) max = Math.max(max, item.inUse, Object.keys(item.holders ?? {}).length);
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  })();
  return {
    maxInUse: () => max,
    async stop() {
      running = false;
      await loop;
    },
  };
}
