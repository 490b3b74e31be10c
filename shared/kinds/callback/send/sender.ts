import type { TargetMessage } from '../messages';

/**
 * Sends one message to one kind of target (`address` as the spec names it: a queue URL, a bus, a function). Throws
 * the SDK's error (or one named like it) for the starter to classify; each target's SDK is in a file of its own.
 */
export interface TargetSender {
  send(address: string, message: TargetMessage, options: { detailType?: string }): Promise<void>;
}
