import { ConfigurationError } from '../../shared/errors';

/**
 * Lambda's asynchronous invocation (InvocationType Event: what EventBridge rules and EventBridge Scheduler do), as its
 * documentation states it. Pure: times in, decisions out, no clock; local/lambda/asyncInvoker.ts drives it.
 *
 * - https://docs.aws.amazon.com/lambda/latest/dg/invocation-async.html: Lambda queues the event and answers 202 at
 *   once; the caller never sees the function's errors.
 * - https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-error-handling.html: on a function error (an error
 *   the code returns, or one of the runtime's, such as a timeout) Lambda runs it two more times by default, waiting one
 *   minute before the first retry and two minutes before the second. Throttling (429) and system errors (500s) return
 *   the event to the queue, retried with a backoff growing from 1 second to at most 5 minutes, for up to 6 hours by
 *   default. The queue is eventually consistent: an event may be delivered more than once even without an error.
 * - https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-configuring.html: MaximumRetryAttempts 0-2 (default
 *   2), MaximumEventAgeInSeconds 60-21600 (default 21600); an event that fails every attempt or grows too old is
 *   discarded.
 * - https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-retain-records.html: a discarded event goes to the
 *   on-failure destination, if one is configured, as an invocation record (the request, and the response's error).
 */

export const ASYNC_DEFAULTS = { maximumRetryAttempts: 2, maximumEventAgeSeconds: 21_600 } as const;
const RETRY_ATTEMPTS_RANGE = [0, 2] as const;
const EVENT_AGE_RANGE = [60, 21_600] as const;
/** The waits before the first and the second retry of a function error. */
export const FUNCTION_ERROR_RETRY_DELAYS_MS = [60_000, 120_000] as const;
/** Throttling and system errors: the backoff's first wait and its cap. */
export const THROTTLE_BACKOFF = { firstMs: 1_000, maxMs: 300_000 } as const;

/** A function's asynchronous invocation configuration (AWS::Lambda::EventInvokeConfig). */
export interface AsyncInvokeConfig {
  maximumRetryAttempts: number;
  maximumEventAgeMs: number;
  /** The on-failure destination as serverless.yml gives it (an ARN, or `{ type, arn }`), unresolved. */
  onFailure?: unknown;
}

/** serverless.yml's function settings that make its EventInvokeConfig. */
export interface AsyncFunctionSettings {
  maximumRetryAttempts?: number;
  maximumEventAge?: number;
  destinations?: { onSuccess?: unknown; onFailure?: unknown };
}

/** The configuration a function's settings give, refused out of range as PutFunctionEventInvokeConfig refuses it. */
export function asyncInvokeConfig(name: string, settings: AsyncFunctionSettings): AsyncInvokeConfig {
  const retries = settings.maximumRetryAttempts ?? ASYNC_DEFAULTS.maximumRetryAttempts;
  const ageSeconds = settings.maximumEventAge ?? ASYNC_DEFAULTS.maximumEventAgeSeconds;
  if (!Number.isInteger(retries) || retries < RETRY_ATTEMPTS_RANGE[0] || retries > RETRY_ATTEMPTS_RANGE[1])
    throw new ConfigurationError(`function ${name}: maximumRetryAttempts must be 0 to 2, got ${retries}`);
  if (!Number.isInteger(ageSeconds) || ageSeconds < EVENT_AGE_RANGE[0] || ageSeconds > EVENT_AGE_RANGE[1])
    throw new ConfigurationError(`function ${name}: maximumEventAge must be 60 to 21600 seconds, got ${ageSeconds}`);
  return {
    maximumRetryAttempts: retries,
    maximumEventAgeMs: ageSeconds * 1000,
    ...(settings.destinations?.onFailure !== undefined && { onFailure: settings.destinations.onFailure }),
  };
}

/** How one attempt ended. */
export const AttemptOutcome = {
  Succeeded: 'succeeded',
  /** the code threw, or the runtime failed it (a timeout) */
  FunctionError: 'function-error',
  /** throttled (429) or a Lambda system error (500s): the function did not run */
  Throttled: 'throttled',
} as const;
export type AttemptOutcome = (typeof AttemptOutcome)[keyof typeof AttemptOutcome];

/** Why Lambda gave an event up (the invocation record's `requestContext.condition`). */
export const DiscardCondition = {
  RetriesExhausted: 'RetriesExhausted',
  EventAgeExceeded: 'EventAgeExceeded',
} as const;
export type DiscardCondition = (typeof DiscardCondition)[keyof typeof DiscardCondition];

/** One queued event's history so far (times in ms, on any one clock). */
export interface EventProgress {
  queuedAt: number;
  /** function errors so far, this attempt's included */
  functionErrors: number;
  /** throttles so far, this attempt's included */
  throttles: number;
}

export type NextStep = { step: 'done' } | { step: 'retry'; afterMs: number } | { step: 'discard'; condition: DiscardCondition };

/** What Lambda does with the event after an attempt ended with `outcome` at `now`. */
export function afterAttempt(progress: EventProgress, outcome: AttemptOutcome, now: number, config: AsyncInvokeConfig): NextStep {
  if (outcome === AttemptOutcome.Succeeded) return { step: 'done' };
  let afterMs: number;
  if (outcome === AttemptOutcome.FunctionError) {
    if (progress.functionErrors > config.maximumRetryAttempts) return { step: 'discard', condition: DiscardCondition.RetriesExhausted };
    afterMs = FUNCTION_ERROR_RETRY_DELAYS_MS[Math.min(progress.functionErrors, FUNCTION_ERROR_RETRY_DELAYS_MS.length) - 1]!;
  } else {
    afterMs = Math.min(THROTTLE_BACKOFF.maxMs, THROTTLE_BACKOFF.firstMs * 2 ** Math.max(0, progress.throttles - 1));
  }
  // An event older than its maximum age when its turn would come is discarded instead.
  if (isExpired(progress.queuedAt, now + afterMs, config)) return { step: 'discard', condition: DiscardCondition.EventAgeExceeded };
  return { step: 'retry', afterMs };
}

export function isExpired(queuedAt: number, now: number, config: AsyncInvokeConfig): boolean {
  return now - queuedAt > config.maximumEventAgeMs;
}

/** The record Lambda sends an on-failure destination (invocation-async-retain-records.html, "Invocation record"). */
export interface InvocationRecord {
  version: '1.0';
  timestamp: string;
  requestContext: { requestId: string; functionArn: string; condition: DiscardCondition; approximateInvokeCount: number };
  requestPayload: unknown;
  responseContext: { statusCode: number; executedVersion: string; functionError?: 'Unhandled' };
  responsePayload?: { errorType: string; errorMessage: string };
}

export function invocationRecord(options: {
  at: number;
  requestId: string;
  functionArn: string;
  condition: DiscardCondition;
  attempts: number;
  event: unknown;
  lastError?: unknown;
}): InvocationRecord {
  const error = options.lastError;
  return {
    version: '1.0',
    timestamp: new Date(options.at).toISOString(),
    requestContext: {
      requestId: options.requestId,
      functionArn: `${options.functionArn}:$LATEST`,
      condition: options.condition,
      approximateInvokeCount: options.attempts,
    },
    requestPayload: options.event,
    responseContext: { statusCode: 200, executedVersion: '$LATEST', ...(error !== undefined && { functionError: 'Unhandled' as const }) },
    ...(error !== undefined && {
      responsePayload: {
        errorType: error instanceof Error ? error.name : 'Error',
        errorMessage: error instanceof Error ? error.message : String(error),
      },
    }),
  };
}
