import { JobApiError, PermanentStartError, TransientStartError } from '../errors';
import {
  type ApiErrorView,
  CallRole,
  type Classified,
  classifyApiError,
  type OperationErrors,
  ReadTake,
  StartTake,
  StopResult,
  StopTake,
} from '../kinds/apiErrors';
import { RunStatus } from '../ports/jobStarter';

/**
 * The kinds' error tables (shared/kinds/<kind>/apiErrors.ts) applied to what the SDK throws: each starter passes the
 * table of the operation that failed, and gets the Sluice error (or answer) the table's take means.
 */

interface SdkError {
  name?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number };
  $retryable?: { throttling?: boolean };
}

/** What the tables read of an SDK error (or of anything thrown: a network failure has no HTTP status). */
export function viewOf(error: unknown): ApiErrorView {
  const e = (error ?? {}) as SdkError;
  return {
    name: typeof e.name === 'string' ? e.name : undefined,
    message: typeof e.message === 'string' ? e.message : String(error),
    httpStatus: e.$metadata?.httpStatusCode,
    throttling: e.$retryable?.throttling,
  };
}

const describe = (what: string, c: Classified<unknown>, error: unknown) =>
  `${what}: ${c.code}: ${viewOf(error).message ?? String(error)} (${c.why})`;

/** A start call's error as TransientStartError (definite: refused; not definite: uncertain) or PermanentStartError. */
export function startFailure(
  op: OperationErrors<typeof CallRole.Start>,
  error: unknown,
  what: string,
): TransientStartError | PermanentStartError {
  const c = classifyApiError(op, viewOf(error));
  const message = describe(what, c, error);
  if (c.take === StartTake.Permanent) return new PermanentStartError(message, c.code, { cause: error });
  return new TransientStartError(message, c.code, { cause: error, definite: c.take === StartTake.Refused });
}

/**
 * A lookup's error (the search for an earlier run): `gone` when the API says the flow / job / queue does not exist (no
 * earlier run either), else the start error it means. A failed search proves nothing about an earlier run: never a
 * definite refusal.
 */
export function lookupFailure(
  op: OperationErrors<typeof CallRole.Lookup>,
  error: unknown,
  what: string,
): typeof ReadTake.Gone | TransientStartError | PermanentStartError {
  const c = classifyApiError(op, viewOf(error));
  if (c.take === ReadTake.Gone) return ReadTake.Gone;
  const message = describe(what, c, error);
  if (c.take === ReadTake.Permanent) return new PermanentStartError(message, c.code, { cause: error });
  return new TransientStartError(message, c.code, { cause: error, definite: false });
}

/** A status call's error: RunStatus.Gone when the table says so; else it throws JobApiError (transient or permanent). */
export function statusFailure(op: OperationErrors<typeof CallRole.Status>, error: unknown, what: string): typeof RunStatus.Gone {
  const c = classifyApiError(op, viewOf(error));
  if (c.take === ReadTake.Gone) return RunStatus.Gone;
  throw new JobApiError(describe(what, c, error), c.code, c.take, { cause: error });
}

/** A stop call's error: StopResult.AlreadyEnded when there is nothing left to stop; else it throws JobApiError. */
export function stopFailure(op: OperationErrors<typeof CallRole.Stop>, error: unknown, what: string): typeof StopResult.AlreadyEnded {
  const c = classifyApiError(op, viewOf(error));
  if (c.take === StopTake.AlreadyEnded) return StopResult.AlreadyEnded;
  throw new JobApiError(describe(what, c, error), c.code, c.take, { cause: error });
}
