import { SendMessageBatchCommand, SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { JobQueue } from '../../ports/jobQueue';
import { toSqsText, truncateUtf8 } from './sqsText';

/** Message attribute that carries why a message was dead-lettered. */
export const REASON_ATTRIBUTE = 'sluice-reason';

/** Message attribute on a job sent with a slot already reserved for it (see JobQueue.send). */
export const RESERVED_ATTRIBUTE = 'sluice-reserved';

/**
 * Message attribute on a message dead-lettered as it was delivered: the id SQS gave it when it was sent (the sender's
 * SendMessage answer names it), from the acquirer's context `messageId`.
 */
export const MESSAGE_ID_ATTRIBUTE = 'sluice-messageId';

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
 * The largest SQS message, body and message attributes together: 1 MiB ("All components of a message attribute are
 * included in the 1 MiB message size restriction",
 * https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-message-metadata.html; SendMessage's
 * MessageBody: "The maximum size is 1 MiB or 1,048,576 bytes",
 * https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessage.html). serverless.yml gives the
 * job queue and the DLQ this MaximumMessageSize.
 */
export const MAX_SQS_MESSAGE_BYTES = 1024 * 1024;

/** What an attribute counts toward the message size: its name, its data type and its value (UTF-8 bytes). */
const attributeBytes = (name: string, value: string): number =>
  Buffer.byteLength(name, 'utf8') + Buffer.byteLength('String', 'utf8') + Buffer.byteLength(value, 'utf8');

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

  /**
   * The DLQ copy is the body as given, byte for byte (a message dead-lettered on arrival: the sender's own, so the user
   * finds it as sent and SQS's redrive, StartMessageMoveTask, restores it exactly), with the reason and the context
   * (job id, pool, the delivered message's id) as `sluice-*` attributes. A body the job queue delivered fits beside
   * them, unless it came within the attributes' few KB of SQS's 1 MiB: such a body is cut to fit, and
   * `sluice-truncated-from` gives its size (it was far over the 64 KiB a job may be, so it could never have run).
   */
  async deadLetter(body: string, reason: string, context: Record<string, string> = {}): Promise<void> {
    const attributes: Record<string, { DataType: 'String'; StringValue: string }> = {};
    const set = (name: string, value: string) => {
      attributes[name] = { DataType: 'String', StringValue: truncateUtf8(toSqsText(value), MAX_ATTRIBUTE_BYTES) };
    };
    set(REASON_ATTRIBUTE, reason || 'unknown');
    for (const [name, value] of Object.entries(context)) if (value) set(`sluice-${name}`, value);
    // SQS refuses a message with characters outside its set; a body SQS delivered has none (toSqsText leaves it as is).
    const text = toSqsText(body);
    const size = (attrs: typeof attributes) => Object.entries(attrs).reduce((sum, [name, a]) => sum + attributeBytes(name, a.StringValue), 0);
    let kept = text;
    if (Buffer.byteLength(text, 'utf8') + size(attributes) > MAX_SQS_MESSAGE_BYTES) {
      set(TRUNCATED_FROM_ATTRIBUTE, String(Buffer.byteLength(body, 'utf8')));
      kept = truncateUtf8(text, MAX_SQS_MESSAGE_BYTES - size(attributes));
    }
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
