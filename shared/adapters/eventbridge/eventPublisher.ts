import { type EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { type EventPublisher, SLUICE_EVENT_SOURCE } from '../../ports/eventPublisher';

/**
 * Sluice's own events (source `sluice`) on a bus, by PutEvents. PutEvents answers 200 even when its entry failed: the
 * entry's ErrorCode is checked and thrown, so the caller retries (the reconciler sends an unnoted completion again).
 */
export class EventBridgePublisher implements EventPublisher {
  constructor(
    private readonly events: EventBridgeClient,
    private readonly busName: string,
  ) {}

  async publish(detailType: string, detail: Record<string, unknown>): Promise<void> {
    const { Entries = [], FailedEntryCount = 0 } = await this.events.send(
      new PutEventsCommand({
        Entries: [{ Source: SLUICE_EVENT_SOURCE, DetailType: detailType, Detail: JSON.stringify(detail), EventBusName: this.busName }],
      }),
    );
    if (FailedEntryCount > 0) throw new Error(`PutEvents entry failed: ${Entries[0]?.ErrorCode ?? ''} ${Entries[0]?.ErrorMessage ?? ''}`.trim());
  }
}
