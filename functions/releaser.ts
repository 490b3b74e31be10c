import type { Context, EventBridgeEvent } from 'aws-lambda';
import { MetricName } from '../shared/app/deps';
import { readCompletionEvent } from '../shared/kinds/completionEvents';
import { isIgnored } from '../shared/kinds/kindDefinition';
import { InvalidEventError } from '../shared/errors';
import { container } from '../shared/runtime/container';
// Starts, checks or stops runs of any kind: every kind's starter (SDK adapter) is in this function's bundle.
import '../shared/kinds/starterLoaders';

/**
 * EventBridge completion event -> releaser (read by the kind its source belongs to, shared/kinds/registry.ts). A malformed event is logged and dropped: retrying it cannot help. Store
 * errors are thrown so EventBridge delivers the event again.
 */
export const handler = async (event: EventBridgeEvent<string, unknown>, context: Context): Promise<void> => {
  const { completeRun, logger, deps } = container();
  logger.addContext(context);
  try {
    let completion;
    try {
      completion = readCompletionEvent(event);
    } catch (error) {
      if (!(error instanceof InvalidEventError)) throw error;
      logger.error('malformed completion event dropped', { reason: error.message, eventId: (event as { id?: string })?.id });
      deps.metrics.count(MetricName.IgnoredEvents);
      return;
    }
    if (isIgnored(completion)) {
      logger.debug('event ends no run', { reason: completion.ignored, eventId: (event as { id?: string })?.id });
      return;
    }
    // Every line of this invocation carries them, the services' lines included.
    logger.appendKeys({ kind: completion.kind, executionId: completion.executionId });
    await completeRun.complete(completion);
  } finally {
    // Appended keys outlive the invocation in a warm environment: the next event must not inherit this run's.
    logger.resetKeys();
  }
};
