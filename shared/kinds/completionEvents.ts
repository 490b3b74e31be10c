import type { RunCompletion } from '../domain/job';
import { InvalidEventError } from '../errors';
import { type IgnoredEvent, isIgnored } from './kindDefinition';
import { KINDS } from './registry';

export { MAX_RUN_ID_LENGTH } from './eventSchemas';
export { APPFLOW_SUCCESS_STATUS } from './appflow/events';
export { GLUE_TERMINAL_STATES } from './glue/events';

/**
 * Reads an EventBridge completion event through the kind whose rules name its source: a completion, or a well-formed
 * event that ends no run with the reason (`{ ignored }`). Throws InvalidEventError for anything malformed and for a
 * source no kind listens to.
 */
export function readCompletionEvent(event: unknown): RunCompletion | IgnoredEvent {
  const source = (event as { source?: unknown } | null)?.source;
  const kind = typeof source === 'string' ? KINDS.find((k) => k.events.rules.some((rule) => rule.source.includes(source))) : undefined;
  if (!kind) throw new InvalidEventError(`not a completion event Sluice knows: source ${JSON.stringify(source)}`);
  // Another function reads these (the callback kind's reports: their tokens are checked there), never the releaser.
  if (kind.events.subscriber !== undefined) {
    throw new InvalidEventError(`source ${JSON.stringify(source)} is for the ${kind.events.subscriber} function, not the releaser`);
  }
  return kind.events.parse(event) as RunCompletion | IgnoredEvent;
}

/** As readCompletionEvent, with `undefined` for an event that ends no run. */
export function parseCompletionEvent(event: unknown): RunCompletion | undefined {
  const read = readCompletionEvent(event);
  return isIgnored(read) ? undefined : read;
}
