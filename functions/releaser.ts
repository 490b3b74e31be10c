import type { Context, EventBridgeEvent } from 'aws-lambda';
import { MetricName } from '../shared/app/deps';
import { parseCompletionEvent } from '../shared/adapters/events/completionEvents';
import { InvalidEventError } from '../shared/errors';
import { container } from '../shared/runtime/container';

/**
 * EventBridge completion event -> releaser. A malformed event is logged and dropped: retrying it cannot help. Store
 * errors are thrown so EventBridge delivers the event again.
 */
export const handler = async (event: EventBridgeEvent<string, unknown>, context: Context): Promise<void> => {
  const { completeRun, logger, deps } = container();
  logger.addContext(context);
  let completion;
  try {
    completion = parseCompletionEvent(event);
  } catch (error) {
    if (!(error instanceof InvalidEventError)) throw error;
    logger.error('malformed completion event dropped', { reason: error.message, eventId: (event as { id?: string })?.id });
    deps.metrics.count(MetricName.IgnoredEvents);
    return;
  }
  if (!completion) return;
  await completeRun.complete(completion);
};
