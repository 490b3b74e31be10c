/** What the acquirer answers for one message, and the message as it comes in. */

export const AcquireResult = {
  Started: 'started',
  Waiting: 'waiting',
  Duplicate: 'duplicate',
  RetryScheduled: 'retry-scheduled',
  DeadLettered: 'dead-lettered',
  /** a limit's tick: the jobs waiting for its start rate were let in */
  Tick: 'tick',
  /** not due yet (notBefore): registered scheduled; its delayed copy or the loader brings it back when due */
  Scheduled: 'scheduled',
} as const;
export type AcquireResult = (typeof AcquireResult)[keyof typeof AcquireResult];

export interface InboundMessage {
  messageId: string;
  body: string;
  /**
   * The sender says the job is known (a hand-off's reserved slot, or a scheduled job sent when due), so it is read, not
   * registered.
   */
  reservedHint?: boolean;
  /**
   * When the message was sent (epoch ms, SQS SentTimestamp), or the slot handed over when the releaser starts the job
   * itself: a reserved job's start reports its hand-off latency from it.
   */
  sentAt?: number;
  /**
   * No message stands behind this start: the releaser starts the job it handed a slot to in its own invocation (one
   * hop), and its completion event, if retried, does not lead back to this job. See `failed`.
   */
  oneHop?: boolean;
}

/** The message being handled, as its DLQ copy keeps it: its body byte for byte, its id as an attribute. */
export type Delivered = Pick<InboundMessage, 'messageId' | 'body'>;
