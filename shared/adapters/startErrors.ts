import { PermanentStartError, TransientStartError } from '../errors';

/** Error names the job APIs use for "try again later". */
export const TRANSIENT_START_ERRORS = [
  'ThrottlingException',
  'TooManyRequestsException',
  'RequestLimitExceeded',
  'ConcurrentRunsExceededException',
  'ServiceQuotaExceededException',
  'ResourceNumberLimitExceededException',
  'InternalServerException',
  'InternalServiceException',
  'OperationTimeoutException',
  'ServiceUnavailableException',
  'ConflictException',
] as const;

/** Error names that will not pass by waiting: the job itself is wrong. */
export const PERMANENT_START_ERRORS = [
  'ValidationException',
  'InvalidInputException',
  'AccessDeniedException',
  'UnauthorizedException',
  'ResourceNotFoundException',
  'EntityNotFoundException',
] as const;

interface SdkError {
  name?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number };
  $retryable?: unknown;
}

/**
 * Maps an SDK error from a start call to TransientStartError or PermanentStartError. Unknown 4xx answers are permanent
 * (the request is wrong); server errors and network failures (no HTTP status) are transient.
 */
export function classifyStartError(error: unknown, what: string): TransientStartError | PermanentStartError {
  const e = (error ?? {}) as SdkError;
  const code = e.name ?? 'Error';
  const message = `${what}: ${code}: ${e.message ?? String(error)}`;
  if ((TRANSIENT_START_ERRORS as readonly string[]).includes(code)) return new TransientStartError(message, code, { cause: error });
  if ((PERMANENT_START_ERRORS as readonly string[]).includes(code)) return new PermanentStartError(message, code, { cause: error });
  const status = e.$metadata?.httpStatusCode;
  if (status !== undefined && status >= 400 && status < 500 && status !== 429) {
    return new PermanentStartError(message, code, { cause: error });
  }
  // No HTTP status means no answer: the request may have reached the service and started a run.
  return new TransientStartError(message, code, { cause: error, definite: status !== undefined });
}
