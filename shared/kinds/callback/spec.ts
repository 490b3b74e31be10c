import * as z from 'zod';
import { base } from '../../domain/job';

export const CALLBACK_KIND = 'callback';

/** The payload travels in the job message, the ledger and the start request: at most this many bytes of JSON. */
export const MAX_PAYLOAD_BYTES = 32 * 1024;
/** The longest a callback job may run (7 days); the stage's MAX_RUN_SECONDS_CALLBACK caps it further. */
export const MAX_TIMEOUT_SECONDS = 7 * 24 * 3600;

/** https://sqs.<region>.amazonaws.com/<account>/<queue> (emulators use other hosts: any http(s) URL whose path ends in a queue name). */
const QUEUE_URL = /^https?:\/\/[^/\s]+\/[^/\s]+\/([A-Za-z0-9_-]{1,75}(\.fifo)?)$/;
/** A bus name, or its ARN (arn:aws:events:REGION:ACCOUNT:event-bus/NAME). */
const EVENT_BUS = /^(arn:aws[a-z-]*:events:[a-z0-9-]+:\d{12}:event-bus\/)?([A-Za-z0-9._\-/]{1,256})$/;
/** A function name, its partial ARN (ACCOUNT:function:NAME) or ARN, with an optional version or alias. */
const FUNCTION =
  /^(arn:aws[a-z-]*:lambda:[a-z0-9-]+:\d{12}:function:|\d{12}:function:)?([A-Za-z0-9_-]{1,64})(:(\$LATEST|[A-Za-z0-9_-]{1,128}))?$/;
/** EventBridge detail types: 1-128 characters. */
const DETAIL_TYPE = z.string().min(1).max(128);

const Target = z.union([
  z.object({ sqs: z.string().regex(QUEUE_URL, 'sqs must be a queue URL (https://sqs.REGION.amazonaws.com/ACCOUNT/NAME)') }).strict(),
  z
    .object({
      eventBus: z.string().regex(EVENT_BUS, 'eventBus must be an event bus name or ARN'),
      /** The start event's detail type (default "Sluice Callback Start"), for the user's rule to match. */
      detailType: DETAIL_TYPE.optional(),
    })
    .strict(),
  z.object({ lambda: z.string().regex(FUNCTION, 'lambda must be a function name or ARN') }).strict(),
]);
export type CallbackTarget = z.infer<typeof Target>;

const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value ?? null), 'utf8');

/**
 * Anything else: Sluice asks the user's system to do the work (a message to an SQS queue, an event on an EventBridge
 * bus, or an asynchronous Lambda invoke) with the job id, `payload` and a completion token, and the system reports the
 * end with the token. A job that neither reports nor sends a heartbeat in time (`timeoutSeconds` from its start,
 * `heartbeatSeconds` from its last heartbeat) is ended as failed by the reconciler.
 */
export const CallbackJobSchema = z
  .object({
    ...base,
    kind: z.literal(CALLBACK_KIND),
    target: Target,
    payload: z
      .json()
      .optional()
      .refine((value) => jsonBytes(value) <= MAX_PAYLOAD_BYTES, `payload must be at most ${MAX_PAYLOAD_BYTES} bytes of JSON`),
    /** The longest the run may take, from its start, before the reconciler ends it as failed. */
    timeoutSeconds: z.number().int('timeoutSeconds must be a whole number').min(1).max(MAX_TIMEOUT_SECONDS),
    /** When set, the run is ended as failed when no heartbeat (nor the start) came for this long. */
    heartbeatSeconds: z.number().int('heartbeatSeconds must be a whole number').min(1).max(MAX_TIMEOUT_SECONDS).optional(),
  })
  .strict()
  .refine((spec) => spec.heartbeatSeconds === undefined || spec.heartbeatSeconds <= spec.timeoutSeconds, {
    message: 'heartbeatSeconds must not be more than timeoutSeconds',
    path: ['heartbeatSeconds'],
  });

export type CallbackJob = z.infer<typeof CallbackJobSchema>;

/** What a target is, and the name its allowed pattern is checked against. */
export type TargetType = 'sqs' | 'eventBus' | 'lambda';

export function targetOf(target: CallbackTarget): { type: TargetType; name: string; address: string } {
  if ('sqs' in target) return { type: 'sqs', name: QUEUE_URL.exec(target.sqs)![1]!, address: target.sqs };
  if ('eventBus' in target) return { type: 'eventBus', name: EVENT_BUS.exec(target.eventBus)![2]!, address: target.eventBus };
  return { type: 'lambda', name: FUNCTION.exec(target.lambda)![2]!, address: target.lambda };
}

/** How a target reads in logs and `sluice jobs`: `lambda:NAME`, `sqs:NAME`, `eventBus:NAME`. */
export const describeTarget = (target: CallbackTarget): string => {
  const { type, name } = targetOf(target);
  return `${type}:${name}`;
};
