import { createHash } from 'node:crypto';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { jobApiClient } from '../../../adapters/awsClients';
import { encodeSqsJson } from '../../../domain/jobBody';
import type { TargetMessage } from '../messages';
import type { TargetSender } from './sender';

/**
 * A message to the user's queue. FIFO queues (`.fifo`) get the job id as the message group and a deduplication id
 * from the run id and the message type, so SQS itself drops a repeated start within its 5-minute window.
 */
export class SqsSender implements TargetSender {
  constructor(private readonly sqs: SQSClient) {}

  async send(queueUrl: string, message: TargetMessage): Promise<void> {
    const fifo = queueUrl.endsWith('.fifo');
    await this.sqs.send(
      new SendMessageCommand({
        QueueUrl: queueUrl,
        MessageBody: encodeSqsJson(message),
        ...(fifo && {
          MessageGroupId: message.jobId,
          MessageDeduplicationId: createHash('sha256').update(`${message.type}\0${message.runId}`).digest('hex'),
        }),
      }),
    );
  }
}

/**
 * The process's client for users' queues (separate from the job queue's: its requests are the job API's, counted as
 * such locally). SQS goes to the configured endpoint, not the host in the URL, as the functions' own client does.
 */
export const createSqsSender = (): SqsSender =>
  new SqsSender(jobApiClient('callback-sqs', () => new SQSClient({ maxAttempts: 1, useQueueUrlAsEndpoint: false })));
