import * as z from 'zod';
import { InvalidEventError } from '../errors';

/**
 * What every kind's completion-event parser shares: the EventBridge envelope, the run id's bounds, and one way to say
 * what is malformed.
 */

/**
 * An EventBridge event's envelope (https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-events-structure.html),
 * field for field as Powertools' parser has it (`EventBridgeSchema`). Written here, not imported: that module imports
 * zod's whole `z` object, which puts every locale of zod's error messages (about 260 KB) in each function's bundle.
 */
export const EventBridgeSchema = z.object({
  version: z.string(),
  id: z.string(),
  source: z.string(),
  account: z.string(),
  time: z.iso.datetime(),
  region: z.string(),
  resources: z.array(z.string()),
  'detail-type': z.string(),
  detail: z.unknown(),
  'replay-name': z.string().optional(),
});

/**
 * Run ids are short on AWS (AppFlow: a UUID; Glue: "jr_" + 64 hex; ARNs of executions, tasks: well under 256). A longer
 * one cannot be a run Sluice started, and over 2 KB it would not even fit in a DynamoDB key: refuse it as malformed
 * rather than fail (and retry) the lookup.
 */
export const MAX_RUN_ID_LENGTH = 256;
export const RunId = z.string().min(1).max(MAX_RUN_ID_LENGTH);

/** The envelope with this source and detail type, and `detail` of this shape (extra fields allowed). */
export function eventOf<D extends z.ZodRawShape>(source: string, detailType: string, detail: D) {
  return EventBridgeSchema.extend({
    source: z.literal(source),
    'detail-type': z.literal(detailType),
    detail: z.looseObject(detail),
  });
}

export function parseEventOrThrow<T extends z.ZodType>(schema: T, event: unknown, what: string): z.infer<T> {
  const parsed = schema.safeParse(event);
  if (!parsed.success) throw invalidEvent(what, parsed.error);
  return parsed.data;
}

export function invalidEvent(what: string, error: z.ZodError): InvalidEventError {
  const issues = error.issues
    .slice(0, 5)
    .map((i) => `${i.path.join('.')}: ${i.message}`)
    .join('; ');
  return new InvalidEventError(`malformed ${what} completion event: ${issues}`, { cause: error });
}
