import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { RESERVED_ATTRIBUTE } from '../shared/adapters/sqs/jobQueue';
import { container } from '../shared/runtime/container';

const processor = new BatchProcessor(EventType.SQS);

/** SQS -> acquirer: each job message is acquired, started, parked or dead-lettered; failures are reported per item. */
export const handler = async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
  const { acquirer, logger } = container();
  logger.addContext(context);
  return processPartialResponse(
    event,
    async (record: SQSRecord) =>
      acquirer.process({
        messageId: record.messageId,
        body: record.body,
        reservedHint: record.messageAttributes?.[RESERVED_ATTRIBUTE]?.stringValue === 'true',
      }),
    processor,
    { context, throwOnFullBatchFailure: false },
  );
};
