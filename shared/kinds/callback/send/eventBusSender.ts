import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { jobApiClient } from '../../../adapters/awsClients';
import { CANCEL_DETAIL_TYPE, START_DETAIL_TYPE, START_SOURCE, type TargetMessage } from '../messages';
import type { TargetSender } from './sender';

/** An error named after a failed PutEvents entry's ErrorCode, so the start is classified as a call's error would be. */
export class FailedEntryError extends Error {
  constructor(code: string, message: string) {
    super(message);
    this.name = code;
  }
}

/**
 * An event on the user's bus: source `sluice`, detail type the target's (default `Sluice Callback Start`; a cancel is
 * `Sluice Callback Cancel`), the message as detail. PutEvents answers 200 even when its entry failed: the entry's
 * ErrorCode is thrown as the error.
 */
export class EventBusSender implements TargetSender {
  constructor(private readonly events: EventBridgeClient) {}

  async send(eventBus: string, message: TargetMessage, options: { detailType?: string }): Promise<void> {
    const detailType = message.type === 'cancel' ? CANCEL_DETAIL_TYPE : (options.detailType ?? START_DETAIL_TYPE);
    const out = await this.events.send(
      new PutEventsCommand({
        Entries: [{ EventBusName: eventBus, Source: START_SOURCE, DetailType: detailType, Detail: JSON.stringify(message) }],
      }),
    );
    const entry = out.Entries?.[0];
    if ((out.FailedEntryCount ?? 0) > 0 || entry?.ErrorCode) {
      throw new FailedEntryError(
        entry?.ErrorCode ?? 'InternalFailure',
        `PutEvents entry failed: ${entry?.ErrorMessage ?? 'no reason given'}`,
      );
    }
  }
}

export const createEventBusSender = (): EventBusSender =>
  new EventBusSender(jobApiClient('eventbridge', () => new EventBridgeClient({ maxAttempts: 1 })));
