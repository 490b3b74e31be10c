import { DeleteMessageBatchCommand, ReceiveMessageCommand, type Message, type SQSClient } from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { BatchOutcome, settleBatch, type HandlerResult } from './batchSettlement';
import { runInvocation } from '../lambda/invocation';
import { createLambdaContext } from './lambdaContext';
import { parseQueueArn, toSqsRecord } from './sqsRecord';

export type SqsHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse | void>;

/** Where an error reported to `onError` happened. */
export const PollerErrorSource = { Receive: 'receive', Handler: 'handler', Delete: 'delete' } as const;
export type PollerErrorSource = (typeof PollerErrorSource)[keyof typeof PollerErrorSource];

export interface SqsPollerOptions {
  client: SQSClient;
  queueUrl: string;
  queueArn: string;
  handler: SqsHandler;
  /** Records per invocation. Above 10 the poller gathers several receives within the batching window. Default 10. */
  batchSize?: number;
  /** How long to keep gathering after the first message of a batch. Default 0: invoke with what one receive got. */
  maximumBatchingWindowMs?: number;
  /** Parallel pollers, each invoking the handler one batch at a time. Default 2. */
  concurrency?: number;
  /** Long-poll wait (Lambda uses 20 s); short so that stop() is prompt. Default 1 s. */
  waitTimeSeconds?: number;
  /** FunctionResponseTypes: [ReportBatchItemFailures]. Without it, the handler's return value is ignored. Default true. */
  reportBatchItemFailures?: boolean;
  functionName?: string;
  /**
   * The function's timeout: a handler still running then fails its batch and is abandoned (its AWS calls refused on the
   * clients the local stack fences; its promise is still awaited by stop()). Default 30 s.
   */
  functionTimeoutMs?: number;
  memoryLimitInMB?: number;
  /** Pause after a failed receive, so that a dead endpoint is not hammered. Default 1 s. */
  errorBackoffMs?: number;
  onError?: (error: unknown, source: PollerErrorSource) => void;
  /** Called just before each invocation (for benchmarks: SentTimestamp to handler start). */
  onInvoke?: (event: SQSEvent, context: Context) => void;
}

export interface PollerStats {
  /** ReceiveMessage calls. */
  receives: number;
  /** Messages received (a redelivered message counts again). */
  messages: number;
  invocations: number;
  succeeded: number;
  partiallyFailed: number;
  failed: number;
  /** Messages deleted. */
  deletes: number;
  deleteFailures: number;
}

const OUTCOME_COUNTER = {
  [BatchOutcome.Succeeded]: 'succeeded',
  [BatchOutcome.PartiallyFailed]: 'partiallyFailed',
  [BatchOutcome.Failed]: 'failed',
} as const satisfies Record<BatchOutcome, keyof PollerStats>;

export interface SqsPoller {
  readonly stats: Readonly<PollerStats>;
  /** Stops receiving, finishes the batches in hand (handler and deletes), then resolves. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Polls a queue and invokes a handler like Lambda's SQS event source mapping: Lambda's record shape, batching, and
 * deletion by the handler's outcome. Failed messages are left alone, not made visible again: Lambda does not do it
 * either, so they come back when the queue's visibility timeout ends and their receive count grows.
 */
export function startSqsPoller(options: SqsPollerOptions): SqsPoller {
  const batchSize = options.batchSize ?? 10;
  const windowMs = options.maximumBatchingWindowMs ?? 0;
  const waitTimeSeconds = options.waitTimeSeconds ?? 1;
  const { region, accountId } = parseQueueArn(options.queueArn);
  if (!Number.isInteger(batchSize) || batchSize < 1) throw new Error(`batchSize must be a positive integer, got ${batchSize}`);

  const stats: PollerStats = {
    receives: 0,
    messages: 0,
    invocations: 0,
    succeeded: 0,
    partiallyFailed: 0,
    failed: 0,
    deletes: 0,
    deleteFailures: 0,
  };
  const report = (error: unknown, source: PollerErrorSource) => {
    try {
      (options.onError ?? ((e, s) => console.error(`[sqs poller ${options.queueArn}] ${s} error`, e)))(error, source);
    } catch {
      // a throwing error hook must not kill a poller
    }
  };
  let stopping = false;
  const wakeUps = new Set<() => void>();
  const timedOut = new Set<Promise<unknown>>(); // handlers still running after their timeout; stop() waits for them

  /** Resolves after ms, or at once when stop() is called. */
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        wakeUps.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      wakeUps.add(wake);
    });

  async function receive(max: number, waitSeconds: number): Promise<Message[]> {
    stats.receives++;
    const { Messages = [] } = await options.client.send(
      new ReceiveMessageCommand({
        QueueUrl: options.queueUrl,
        MaxNumberOfMessages: max,
        WaitTimeSeconds: waitSeconds,
        MessageSystemAttributeNames: ['All'],
        MessageAttributeNames: ['All'],
      }),
    );
    stats.messages += Messages.length;
    return Messages;
  }

  /** One batch: the first receive long-polls; once a message is in hand, keep receiving until full or the window ends. */
  async function gather(): Promise<Message[]> {
    const batch: Message[] = [];
    let deadline = Infinity;
    while (!stopping && batch.length < batchSize) {
      const remainingMs = deadline - Date.now();
      if (remainingMs <= 0) break;
      const waitSeconds = Math.min(waitTimeSeconds, Math.floor(remainingMs / 1000));
      let got: Message[];
      try {
        got = await receive(Math.min(10, batchSize - batch.length), waitSeconds);
      } catch (error) {
        if (batch.length === 0) throw error;
        report(error, PollerErrorSource.Receive);
        break; // invoke with the messages in hand rather than let them sit out their visibility timeout
      }
      if (batch.length === 0) {
        if (got.length === 0) return batch; // an idle long poll: let the caller look at `stopping`
        deadline = Date.now() + windowMs;
      }
      batch.push(...got);
      // Less than a second of window left means short polls; do not spin on an empty queue.
      if (got.length === 0 && waitSeconds === 0) await pause(Math.min(50, Math.max(0, deadline - Date.now())));
    }
    return batch;
  }

  async function invoke(messages: Message[]): Promise<void> {
    const event: SQSEvent = { Records: messages.map((message) => toSqsRecord(message, options.queueArn)) };
    const timeoutMs = options.functionTimeoutMs ?? 30_000;
    const context = createLambdaContext({
      functionName: options.functionName ?? 'local-sqs-consumer',
      timeoutMs,
      region,
      accountId,
      ...(options.memoryLimitInMB !== undefined && { memoryLimitInMB: options.memoryLimitInMB }),
    });
    stats.invocations++;
    try {
      options.onInvoke?.(event, context);
    } catch {
      // a broken measuring hook must not change the invocation
    }
    const result = await runHandler(event, context, timeoutMs);
    if (result.threw) report(result.error, PollerErrorSource.Handler);
    const settlement = settleBatch(event.Records, result, options.reportBatchItemFailures ?? true);
    stats[OUTCOME_COUNTER[settlement.outcome]]++;
    await deleteRecords(settlement.toDelete);
  }

  /**
   * One invocation with the function's timeout, as Lambda runs it: a handler still running then fails its batch (its
   * messages come back after their visibility timeout) and is abandoned, its later AWS calls refused
   * (local/lambda/invocation.ts); stop() still waits for it to settle.
   */
  async function runHandler(event: SQSEvent, context: Context, timeoutMs: number): Promise<HandlerResult> {
    const result = await runInvocation({
      functionName: options.functionName ?? 'local-sqs-consumer',
      timeoutMs,
      run: () => options.handler(event, context),
      onAbandoned: (still) => {
        const settled: Promise<unknown> = still.finally(() => timedOut.delete(settled));
        timedOut.add(settled);
      },
    });
    return result.ok ? { threw: false, value: result.value } : { threw: true, error: result.error };
  }

  async function deleteRecords(records: SQSRecord[]): Promise<void> {
    for (let i = 0; i < records.length; i += 10) {
      const chunk = records.slice(i, i + 10);
      try {
        const { Successful = [], Failed = [] } = await options.client.send(
          new DeleteMessageBatchCommand({
            QueueUrl: options.queueUrl,
            Entries: chunk.map((record, n) => ({ Id: String(n), ReceiptHandle: record.receiptHandle })),
          }),
        );
        stats.deletes += Successful.length;
        stats.deleteFailures += Failed.length;
        if (Failed.length > 0) report(new Error(`DeleteMessageBatch failed for ${JSON.stringify(Failed)}`), PollerErrorSource.Delete);
      } catch (error) {
        stats.deleteFailures += chunk.length;
        report(error, PollerErrorSource.Delete);
      }
    }
  }

  async function pollLoop(): Promise<void> {
    while (!stopping) {
      let messages: Message[];
      try {
        messages = await gather();
      } catch (error) {
        report(error, PollerErrorSource.Receive);
        await pause(options.errorBackoffMs ?? 1_000);
        continue;
      }
      if (messages.length > 0) await invoke(messages);
      else if (waitTimeSeconds === 0) await pause(50); // short polling on an idle queue: do not spin
    }
  }

  const loops = Array.from({ length: Math.max(1, options.concurrency ?? 2) }, () => pollLoop());
  let stopped: Promise<void> | undefined;
  return {
    stats,
    stop() {
      stopped ??= (async () => {
        stopping = true;
        [...wakeUps].forEach((wake) => wake());
        await Promise.all(loops);
        await Promise.all(timedOut);
      })();
      return stopped;
    },
  };
}
