import { PermanentStartError, TransientStartError } from '../errors';
import type { StartErrorCodes } from '../kinds/kindDefinition';

const NO_CODES: StartErrorCodes = { refused: [], uncertain: [], permanent: [] };

/*
 * A start error classifier for callers without an operation's table (the explorer's scenarios). The starters take
 * every error by their kind's tables instead (shared/kinds/<kind>/apiErrors.ts, through shared/adapters/apiErrors.ts),
 * which name every error each call can return. The errors every AWS API shares, and those of the AppFlow and Glue
 * start calls:
 * - AppFlow StartFlow: ConflictException (409), InternalServerException (500), ResourceNotFoundException (404),
 *   ServiceQuotaExceededException (402); throttling comes as ThrottlingException (429).
 *   https://docs.aws.amazon.com/appflow/1.0/APIReference/API_StartFlow.html
 * - Glue StartJobRun: ConcurrentRunsExceededException, EntityNotFoundException, InternalServiceException,
 *   InvalidInputException, OperationTimeoutException, ResourceNumberLimitExceededException.
 *   https://docs.aws.amazon.com/glue/latest/dg/aws-glue-api-jobs-runs.html#aws-glue-api-jobs-runs-StartJobRun
 * Only a refusal proves that the call started nothing. A server fault or a timeout may come after the run was created.
 */

/** The service said no, so nothing started (TransientStartError.definite): throttling and limits. */
export const REFUSED_START_ERRORS = [
  'ThrottlingException',
  'TooManyRequestsException',
  'RequestLimitExceeded',
  'ServiceQuotaExceededException',
  'ResourceNumberLimitExceededException',
  'ConcurrentRunsExceededException',
] as const;

/**
 * Failures that may pass but may have started a run (definite false). ConflictException is here: StartFlow documents
 * it only as "a conflict when processing the request", not as a refusal, so it proves nothing.
 */
export const UNCERTAIN_START_ERRORS = [
  'InternalServerException',
  'InternalServiceException',
  'ServiceUnavailableException',
  'OperationTimeoutException',
  'ConflictException',
] as const;

/** Error names that will not pass by waiting: the job itself is wrong. The request was refused, so nothing started. */
export const PERMANENT_START_ERRORS = [
  'ValidationException',
  'InvalidInputException',
  'AccessDeniedException',
  'UnauthorizedException',
  'ResourceNotFoundException',
  'EntityNotFoundException',
] as const;

const TOO_MANY_REQUESTS = 429;

interface SdkError {
  name?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number };
  $retryable?: { throttling?: boolean };
}

const isOneOf = (list: readonly string[], code: string) => list.includes(code);

/**
 * Maps an SDK error from a start call to TransientStartError or PermanentStartError. A known refusal (throttling, a
 * limit, HTTP 429) is transient and definite. Known permanent names and other 4xx answers are permanent. Anything
 * else is transient and not definite: server faults (5xx), timeouts, network failures with no answer and errors with
 * no name this module knows. The caller must then assume a run may exist and keep the slot.
 */
export function classifyStartError(
  error: unknown,
  what: string,
  /** Codes of the call's own, checked before the shared lists. */
  kindCodes: StartErrorCodes = NO_CODES,
): TransientStartError | PermanentStartError {
  const e = (error ?? {}) as SdkError;
  const code = e.name ?? 'Error';
  const message = `${what}: ${code}: ${e.message ?? String(error)}`;
  const status = e.$metadata?.httpStatusCode;
  if (isOneOf(kindCodes.refused, code)) return new TransientStartError(message, code, { cause: error, definite: true });
  if (isOneOf(kindCodes.uncertain, code)) return new TransientStartError(message, code, { cause: error, definite: false });
  if (isOneOf(kindCodes.permanent, code)) return new PermanentStartError(message, code, { cause: error });
  const refused = isOneOf(REFUSED_START_ERRORS, code) || status === TOO_MANY_REQUESTS || e.$retryable?.throttling === true;
  if (refused) return new TransientStartError(message, code, { cause: error, definite: true });
  if (isOneOf(UNCERTAIN_START_ERRORS, code)) return new TransientStartError(message, code, { cause: error, definite: false });
  if (isOneOf(PERMANENT_START_ERRORS, code)) return new PermanentStartError(message, code, { cause: error });
  if (status !== undefined && status >= 400 && status < 500) return new PermanentStartError(message, code, { cause: error });
  return new TransientStartError(message, code, { cause: error, definite: false });
}
