import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { JobQueue } from '../../ports/jobQueue';

/** Message attribute that carries why a message was dead-lettered. */
export const REASON_ATTRIBUTE = 'sluice-reason';

/** Message attribute on a job sent with a slot already reserved for it (see JobQueue.send). */
export const RESERVED_ATTRIBUTE = 'sluice-reserved';

/** SQS message attribute values are limited to 256 KB in all; reasons are kept short. */
const MAX_REASON = 1000;

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

  async deadLetter(body: string, reason: string, context: Record<string, string> = {}): Promise<void> {
    const attributes: Record<string, { DataType: 'String'; StringValue: string }> = {
      [REASON_ATTRIBUTE]: { DataType: 'String', StringValue: reason.slice(0, MAX_REASON) || 'unknown' },
    };
    for (const [name, value] of Object.entries(context)) {
      if (value) attributes[`sluice-${name}`] = { DataType: 'String', StringValue: value.slice(0, MAX_REASON) };
    }
    // An empty body is not allowed by SQS; keep the message recognisable.
    await this.sqs.send(
      new SendMessageCommand({ QueueUrl: this.deadLetterUrl, MessageBody: body.length > 0 ? body : '(empty message)', MessageAttributes: attributes }),
    );
  }
}
