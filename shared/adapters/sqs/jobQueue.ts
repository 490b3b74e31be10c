import { SendMessageBatchCommand, SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { JobQueue } from '../../ports/jobQueue';
import { toSqsText, truncateUtf8 } from './sqsText';

/** Message attribute that carries why a message was dead-lettered. */
export const REASON_ATTRIBUTE = 'sluice-reason';

/** Message attribute on a job sent with a slot already reserved for it (see JobQueue.send). */
export const RESERVED_ATTRIBUTE = 'sluice-reserved';

/** Message attribute on a dead-lettered copy whose body was cut: the original body's size in bytes. */
export const TRUNCATED_FROM_ATTRIBUTE = 'sluice-truncated-from';

/** SendMessageBatch takes at most 10 entries; this many batches are in flight at once. */
const BATCH_SIZE = 10;
const BATCHES_IN_FLIGHT = 8;
/** Entries a batch answered as failed (throttled, say) are sent again this many times before sendAll throws. */
const BATCH_RETRIES = 3;

/** Attributes count toward the SQS message size; reasons and context values are kept short. */
const MAX_ATTRIBUTE_BYTES = 1000;

/**
 * A dead-lettered copy keeps at most this much of the original body, so body plus attributes always fit in an SQS
 * message (1 MiB on AWS since August 2025, 256 KiB before, so within either:
 * https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/quotas-messages.html), whatever the
 * original's size. A job spec is at most 64 KiB, so a runnable spec is never cut.
 */
export const MAX_DEAD_LETTER_BODY_BYTES = 64 * 1024;

export class SqsJobQueue implements JobQueue {
  constructor(
    private readonly sqs: SQSClient,
    private readonly queueUrl: string,
    private readonly deadLetterUrl: string,
  ) {}

  async send(body: string, delaySeconds = 0, options: { reserved?: boolean } = {}): Promise<void> {
    await this.sqs.send(
      new SendMessageCommand({
        QueueUrl: this.queueUrl,
        MessageBody: body,
        DelaySeconds: delaySeconds,
        MessageAttributes: options.reserved ? { [RESERVED_ATTRIBUTE]: { DataType: 'String', StringValue: 'true' } } : undefined,
      }),
    );
  }

  async sendAll(bodies: readonly string[]): Promise<void> {
    const batches: string[][] = [];
    for (let i = 0; i < bodies.length; i += BATCH_SIZE) batches.push(bodies.slice(i, i + BATCH_SIZE));
    let next = 0;
    const worker = async () => {
      while (next < batches.length) await this.sendBatch(batches[next++]!);
    };
    await Promise.all(Array.from({ length: Math.min(BATCHES_IN_FLIGHT, batches.length) }, worker));
  }

  /** One SendMessageBatch; the entries it answers as failed are sent again (SQS fails entries one by one). */
  private async sendBatch(bodies: string[]): Promise<void> {
    let entries = bodies.map((body, i) => ({ Id: String(i), MessageBody: body }));
    for (let attempt = 0; entries.length > 0; attempt++) {
      const { Failed = [] } = await this.sqs.send(new SendMessageBatchCommand({ QueueUrl: this.queueUrl, Entries: entries }));
      if (Failed.length === 0) return;
      if (attempt >= BATCH_RETRIES || Failed.some((f) => f.SenderFault))
        throw new Error(`SendMessageBatch: ${Failed.length} of ${entries.length} not sent (${Failed[0]?.Code}: ${Failed[0]?.Message ?? ''})`);
      const failed = new Set(Failed.map((f) => f.Id));
      entries = entries.filter((e) => failed.has(e.Id));
    }
  }

  async deadLetter(body: string, reason: string, context: Record<string, string> = {}): Promise<void> {
    const attributes: Record<string, { DataType: 'String'; StringValue: string }> = {};
    const set = (name: string, value: string) => {
      attributes[name] = { DataType: 'String', StringValue: truncateUtf8(toSqsText(value), MAX_ATTRIBUTE_BYTES) };
    };
    set(REASON_ATTRIBUTE, reason || 'unknown');
    for (const [name, value] of Object.entries(context)) if (value) set(`sluice-${name}`, value);
    const bytes = Buffer.byteLength(body, 'utf8');
    const kept = truncateUtf8(toSqsText(body), MAX_DEAD_LETTER_BODY_BYTES);
    if (kept.length < body.length) set(TRUNCATED_FROM_ATTRIBUTE, String(bytes));
    // An empty body is not allowed by SQS; keep the message recognisable.
    await this.sqs.send(
      new SendMessageCommand({
        QueueUrl: this.deadLetterUrl,
        MessageBody: kept.length > 0 ? kept : '(empty message)',
        MessageAttributes: attributes,
      }),
    );
  }
}
