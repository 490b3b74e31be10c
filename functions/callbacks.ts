import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, EventBridgeEvent, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { CallbackReports } from '../shared/app/callbackReports';
import { tokenKeyring } from '../shared/kinds/callback/secret';
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
let service: CallbackReports | undefined;

/**
 * Built once per cold start. The token keys are the container's keyring (read on first use, again after a while, and
 * when a token no key checks comes, at most once per REREAD_MIN_INTERVAL_MS by the container's clock).
 */
function reports(): CallbackReports {
  if (!service) {
    const { deps } = container();
    // The container's keyring, looked up on each use (forgetTokenKeys starts it anew, as a new container would).
    const keyring = () => tokenKeyring(process.env, deps.clock);
    service = new CallbackReports(deps, { current: () => keyring().current(), reread: () => keyring().reread() });
  }
  return service;
}

const isSqsEvent = (event: unknown): event is SQSEvent => Array.isArray((event as { Records?: unknown } | null)?.Records);

/**
 * Callback jobs' reports (shared/kinds/callback): messages of the callback queue (a batch, failures reported per item)
 * and `sluice.callback` events from the default bus. Each token is checked before anything is read or written; a
 * malformed report, a forged or an expired token is logged and dropped (retrying cannot help). Store errors are
 * thrown, so the message comes back, or EventBridge delivers the event again.
 */
export const handler = async (
  event: SQSEvent | EventBridgeEvent<string, unknown>,
  context: Context,
): Promise<SQSBatchResponse | undefined> => {
  const { logger } = container();
  logger.addContext(context);
  const callbackReports = reports();
  if (isSqsEvent(event)) {
    return processPartialResponse(
      event,
      async (record: SQSRecord) => callbackReports.fromMessage(record.body, record.messageId),
      newProcessor(),
      { context, throwOnFullBatchFailure: false },
    );
  }
  await callbackReports.fromEvent(event);
  return undefined;
};
