import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { RESERVED_ATTRIBUTE } from '../shared/adapters/sqs/jobQueue';
import { container } from '../shared/runtime/container';
// Starts, checks or stops runs of any kind: every kind's starter (SDK adapter) is in this function's bundle.
import '../shared/kinds/starterLoaders';

/**
 * A batch processor per invocation, not per module: Powertools' processor keeps the batch's records and failures on
 * itself between register() and response(), and invocations that overlap in one process (the local stack runs a
 * function's invocations concurrently in one thread; AWS runs one at a time per environment) would clear each other's
 * failures, so a failed record was reported as processed and its message deleted.
 */
const newProcessor = () => new BatchProcessor(EventType.SQS);

/**
 * SQS -> acquirer: each job message is acquired, started, parked or dead-lettered; failures are reported per item.
 * Records are processed in parallel (Powertools' default), so no per-record key is appended to the shared logger (it
 * would show on the other records' lines): the services name jobId, pool and kind on each line instead.
 */
export const handler = async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
  const { acquirer, logger } = container();
  logger.addContext(context);
  return processPartialResponse(
    event,
    async (record: SQSRecord) => {
      try {
        return await acquirer.process({
          messageId: record.messageId,
          body: record.body,
          reservedHint: record.messageAttributes?.[RESERVED_ATTRIBUTE]?.stringValue === 'true',
          sentAt: sentAt(record),
        });
      } catch (error) {
        // The batch processor reports the record as failed without a word: say which message and why, or a message
        // that fails until SQS moves it to the dead-letter queue leaves no trace. The body is not logged (it is the
        // sender's, and may be large); the message id finds it in the queue.
        logger.error('job message failed; SQS will deliver it again', {
          messageId: record.messageId,
          receiveCount: Number(record.attributes?.ApproximateReceiveCount) || undefined,
          error: error as Error,
        });
        throw error;
      }
    },
    newProcessor(),
    { context, throwOnFullBatchFailure: false },
  );
};

/** SQS's SentTimestamp (epoch ms, a string); undefined when missing or not a positive number. */
function sentAt(record: SQSRecord): number | undefined {
  const sent = Number(record.attributes?.SentTimestamp);
  return Number.isFinite(sent) && sent > 0 ? sent : undefined;
}
