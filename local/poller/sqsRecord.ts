import type { Message, MessageAttributeValue } from '@aws-sdk/client-sqs';
import type { SQSMessageAttribute, SQSRecord, SQSRecordAttributes } from 'aws-lambda';

/** Region and account of a queue, from `arn:aws:sqs:<region>:<account>:<name>`. */
export function parseQueueArn(queueArn: string): { region: string; accountId: string; name: string } {
  const [arn, , service, region, accountId, name] = queueArn.split(':');
  if (arn !== 'arn' || service !== 'sqs' || !region || !accountId || !name) throw new Error(`not an SQS queue ARN: ${queueArn}`);
  return { region, accountId, name };
}

/** System attributes Lambda passes on when SQS returns them (FIFO and tracing ones only exist sometimes). */
const OPTIONAL_ATTRIBUTES = [
  'AWSTraceHeader',
  'SequenceNumber',
  'MessageGroupId',
  'MessageDeduplicationId',
  'DeadLetterQueueSourceArn',
] as const;

/** A received message as Lambda's SQS event source mapping hands it to the function. */
export function toSqsRecord(message: Message, queueArn: string): SQSRecord {
  const system = message.Attributes ?? {};
  const attributes: SQSRecordAttributes = {
    ApproximateReceiveCount: system.ApproximateReceiveCount ?? '',
    SentTimestamp: system.SentTimestamp ?? '',
    SenderId: system.SenderId ?? '',
    ApproximateFirstReceiveTimestamp: system.ApproximateFirstReceiveTimestamp ?? '',
  };
  for (const name of OPTIONAL_ATTRIBUTES) {
    const value = system[name];
    if (value !== undefined) attributes[name] = value;
  }
  return {
    messageId: message.MessageId ?? '',
    receiptHandle: message.ReceiptHandle ?? '',
    body: message.Body ?? '',
    attributes,
    messageAttributes: Object.fromEntries(
      Object.entries(message.MessageAttributes ?? {}).map(([name, value]) => [name, toLambdaAttribute(value)]),
    ),
    ...(message.MD5OfMessageAttributes !== undefined && { md5OfMessageAttributes: message.MD5OfMessageAttributes }),
    md5OfBody: message.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN: queueArn,
    awsRegion: parseQueueArn(queueArn).region,
  };
}

/** Lambda's camel-case form: binary as base64, and the (reserved, always empty) list fields present. */
function toLambdaAttribute(value: MessageAttributeValue): SQSMessageAttribute {
  return {
    ...(value.StringValue !== undefined && { stringValue: value.StringValue }),
    ...(value.BinaryValue !== undefined && { binaryValue: base64(value.BinaryValue) }),
    stringListValues: value.StringListValues ?? [],
    binaryListValues: (value.BinaryListValues ?? []).map(base64),
    dataType: value.DataType ?? 'String',
  };
}

const base64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');
