import { classifyStartError } from '../../../shared/adapters/startErrors';
import { PermanentStartError, TransientStartError } from '../../../shared/errors';

/** An error shaped as the SDK throws them: a name and, when an answer came, its HTTP status. */
function sdkError(name: string, status?: number, extra: Record<string, unknown> = {}): Error {
  return Object.assign(new Error(`${name} happened`), {
    name,
    ...(status !== undefined ? { $metadata: { httpStatusCode: status } } : {}),
    ...extra,
  });
}

function classified(error: unknown) {
  const result = classifyStartError(error, 'StartJobRun etl');
  return {
    kind: result instanceof TransientStartError ? 'transient' : result instanceof PermanentStartError ? 'permanent' : 'other',
    definite: result instanceof TransientStartError ? result.definite : undefined,
  };
}

describe('classifyStartError', () => {
  test.each([
    ['ThrottlingException', 400],
    ['ThrottlingException', 429],
    ['TooManyRequestsException', 429],
    ['RequestLimitExceeded', 503],
    ['ServiceQuotaExceededException', 402],
    ['ResourceNumberLimitExceededException', 400],
    ['ConcurrentRunsExceededException', 400],
    ['SlowDown', 429],
  ])('%s (%s) is a refusal: transient and definite', (name, status) => {
    expect(classified(sdkError(name, status))).toEqual({ kind: 'transient', definite: true });
  });

  test('an error the SDK marks as throttling is a refusal whatever its name', () => {
    expect(classified(sdkError('SomethingThrottled', 400, { $retryable: { throttling: true } }))).toEqual({
      kind: 'transient',
      definite: true,
    });
  });

  test.each([
    ['InternalServerException', 500],
    ['InternalServiceException', 500],
    ['ServiceUnavailableException', 503],
    ['OperationTimeoutException', 400],
    ['ConflictException', 409],
    ['SomeNewServerFault', 500],
    ['BadGateway', 502],
    ['GatewayTimeout', 504],
  ])('%s (%s) may have started a run: transient and not definite', (name, status) => {
    expect(classified(sdkError(name, status))).toEqual({ kind: 'transient', definite: false });
  });

  test.each([
    ['a timeout', sdkError('TimeoutError')],
    ['a reset connection', Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' })],
    ['a refused connection', sdkError('ECONNREFUSED')],
    ['an unknown name without an answer', sdkError('Whatever')],
    ['a thrown string', 'boom'],
    ['undefined', undefined],
  ])('%s (no HTTP answer) is transient and not definite', (_what, error) => {
    expect(classified(error)).toEqual({ kind: 'transient', definite: false });
  });

  test.each([
    ['ValidationException', 400],
    ['InvalidInputException', 400],
    ['AccessDeniedException', 403],
    ['ResourceNotFoundException', 404],
    ['EntityNotFoundException', 400],
    ['SomeOtherBadRequest', 400],
  ])('%s (%s) is permanent', (name, status) => {
    expect(classified(sdkError(name, status))).toEqual({ kind: 'permanent', definite: undefined });
  });

  test('the message names the call, the code and the text; the code and cause are kept', () => {
    const cause = sdkError('InternalServiceException', 500);
    const error = classifyStartError(cause, 'StartJobRun etl') as TransientStartError;
    expect(error.message).toBe('StartJobRun etl: InternalServiceException: InternalServiceException happened');
    expect(error.code).toBe('InternalServiceException');
    expect(error.cause).toBe(cause);
  });
});
