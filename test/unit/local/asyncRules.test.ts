import fc from 'fast-check';
import { ConfigurationError } from '../../../shared/errors';
import {
  afterAttempt,
  asyncInvokeConfig,
  AttemptOutcome,
  DiscardCondition,
  FUNCTION_ERROR_RETRY_DELAYS_MS,
  invocationRecord,
  isExpired,
  THROTTLE_BACKOFF,
  type AsyncInvokeConfig,
} from '../../../local/lambda/asyncRules';

/** Lambda's asynchronous retry rules (https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-error-handling.html). */
const DEFAULT: AsyncInvokeConfig = asyncInvokeConfig('fn', {});
const MINUTE = 60_000;

describe('asynchronous invocation configuration', () => {
  test("Lambda's defaults: 2 retries, events kept 6 hours, no destination", () => {
    expect(DEFAULT).toEqual({ maximumRetryAttempts: 2, maximumEventAgeMs: 21_600_000 });
  });

  test("serverless.yml's settings, the on-failure destination as given", () => {
    const destination = { type: 'sqs', arn: { 'Fn::GetAtt': ['Q', 'Arn'] } };
    expect(asyncInvokeConfig('fn', { maximumRetryAttempts: 0, maximumEventAge: 60, destinations: { onFailure: destination } })).toEqual({
      maximumRetryAttempts: 0,
      maximumEventAgeMs: 60_000,
      onFailure: destination,
    });
  });

  test.each([
    [{ maximumRetryAttempts: 3 }, 'maximumRetryAttempts must be 0 to 2'],
    [{ maximumRetryAttempts: -1 }, 'maximumRetryAttempts must be 0 to 2'],
    [{ maximumEventAge: 59 }, 'maximumEventAge must be 60 to 21600'],
    [{ maximumEventAge: 21_601 }, 'maximumEventAge must be 60 to 21600'],
  ])('%j is refused, as PutFunctionEventInvokeConfig refuses it', (settings, message) => {
    expect(() => asyncInvokeConfig('fn', settings)).toThrow(ConfigurationError);
    expect(() => asyncInvokeConfig('fn', settings)).toThrow(message);
  });
});

describe('after an attempt', () => {
  const progress = (functionErrors: number, throttles = 0, queuedAt = 0) => ({ queuedAt, functionErrors, throttles });

  test('a success is done', () => {
    expect(afterAttempt(progress(0), AttemptOutcome.Succeeded, 0, DEFAULT)).toEqual({ step: 'done' });
  });

  test('a function error is retried a minute later, then two minutes later, then the event is given up', () => {
    expect(afterAttempt(progress(1), AttemptOutcome.FunctionError, 0, DEFAULT)).toEqual({ step: 'retry', afterMs: MINUTE });
    expect(afterAttempt(progress(2), AttemptOutcome.FunctionError, MINUTE, DEFAULT)).toEqual({ step: 'retry', afterMs: 2 * MINUTE });
    expect(afterAttempt(progress(3), AttemptOutcome.FunctionError, 3 * MINUTE, DEFAULT)).toEqual({
      step: 'discard',
      condition: DiscardCondition.RetriesExhausted,
    });
  });

  test('with maximumRetryAttempts 0, the first function error gives the event up', () => {
    const none = asyncInvokeConfig('fn', { maximumRetryAttempts: 0 });
    expect(afterAttempt(progress(1), AttemptOutcome.FunctionError, 0, none)).toEqual({
      step: 'discard',
      condition: DiscardCondition.RetriesExhausted,
    });
  });

  test('a throttle is retried from 1 s, doubling to at most 5 minutes, and does not use up the retries', () => {
    const delays = [1, 2, 3, 4, 9, 10, 20].map((n) => afterAttempt(progress(2, n), AttemptOutcome.Throttled, 0, DEFAULT));
    expect(delays.map((d) => (d.step === 'retry' ? d.afterMs : d.step))).toEqual([1_000, 2_000, 4_000, 8_000, 256_000, 300_000, 300_000]);
  });

  test('a retry that would come after the maximum event age gives the event up instead (EventAgeExceeded)', () => {
    const short = asyncInvokeConfig('fn', { maximumEventAge: 90 });
    expect(afterAttempt(progress(1), AttemptOutcome.FunctionError, 0, short)).toEqual({ step: 'retry', afterMs: MINUTE });
    expect(afterAttempt(progress(2), AttemptOutcome.FunctionError, MINUTE, short)).toEqual({
      step: 'discard',
      condition: DiscardCondition.EventAgeExceeded,
    });
    expect(isExpired(0, 90_000, short)).toBe(false);
    expect(isExpired(0, 90_001, short)).toBe(true);
  });

  test('property: never more than maximumRetryAttempts + 1 runs for function errors, never a wait past the event age', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2 }),
        fc.integer({ min: 60, max: 21_600 }),
        fc.array(fc.constantFrom(AttemptOutcome.FunctionError, AttemptOutcome.Throttled), { minLength: 1, maxLength: 40 }),
        (retries, ageSeconds, outcomes) => {
          const config = asyncInvokeConfig('fn', { maximumRetryAttempts: retries, maximumEventAge: ageSeconds });
          const p = { queuedAt: 0, functionErrors: 0, throttles: 0 };
          let now = 0;
          for (const outcome of outcomes) {
            if (outcome === AttemptOutcome.FunctionError) p.functionErrors++;
            else p.throttles++;
            const next = afterAttempt(p, outcome, now, config);
            if (next.step !== 'retry') return;
            now += next.afterMs;
            expect(p.functionErrors).toBeLessThanOrEqual(retries);
            expect(now).toBeLessThanOrEqual(config.maximumEventAgeMs);
            expect(next.afterMs).toBeLessThanOrEqual(Math.max(THROTTLE_BACKOFF.maxMs, ...FUNCTION_ERROR_RETRY_DELAYS_MS));
          }
        },
      ),
    );
  });
});

test("the invocation record an on-failure destination gets: Lambda's shape, the event as sent, the last error", () => {
  const error = new Error('boom');
  error.name = 'TypeError';
  expect(
    invocationRecord({
      at: Date.UTC(2026, 10, 27, 2, 3),
      requestId: 'r-1',
      functionArn: 'arn:aws:lambda:us-east-1:000000000000:function:sluice-local-jobSets',
      condition: DiscardCondition.RetriesExhausted,
      attempts: 3,
      event: { set: 'nightly' },
      lastError: error,
    }),
  ).toEqual({
    version: '1.0',
    timestamp: '2026-11-27T02:03:00.000Z',
    requestContext: {
      requestId: 'r-1',
      functionArn: 'arn:aws:lambda:us-east-1:000000000000:function:sluice-local-jobSets:$LATEST',
      condition: 'RetriesExhausted',
      approximateInvokeCount: 3,
    },
    requestPayload: { set: 'nightly' },
    responseContext: { statusCode: 200, executedVersion: '$LATEST', functionError: 'Unhandled' },
    responsePayload: { errorType: 'TypeError', errorMessage: 'boom' },
  });
});
