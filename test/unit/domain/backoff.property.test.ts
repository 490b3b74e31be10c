import fc from 'fast-check';
import { type BackoffPolicy, DEFAULT_BACKOFF, hasAttemptsLeft, retryDelaySeconds, SQS_MAX_DELAY_SECONDS } from '../../../shared/domain/backoff';

const unit = fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true });
const attempt = fc.integer({ min: 1, max: 200 });
const intPolicy = fc.record({
  baseSeconds: fc.integer({ min: 1, max: 120 }),
  maxSeconds: fc.integer({ min: 1, max: 5_000 }),
  maxAttempts: fc.integer({ min: 1, max: 20 }),
});

describe('retry backoff (full jitter)', () => {
  test('delay is within [1, min(cap, base * 2^(n-1))] for whole-second policies', () => {
    fc.assert(
      fc.property(intPolicy, attempt, unit, (policy, n, r) => {
        const delay = retryDelaySeconds(n, policy, () => r);
        const ceiling = Math.min(policy.maxSeconds, SQS_MAX_DELAY_SECONDS, policy.baseSeconds * 2 ** (n - 1));
        expect(delay).toBeGreaterThanOrEqual(1);
        expect(delay).toBeLessThanOrEqual(Math.max(1, ceiling));
        expect(Number.isInteger(delay)).toBe(true);
      }),
    );
  });

  test('never above 900 s (the SQS maximum), whatever the policy says', () => {
    fc.assert(
      fc.property(
        fc.record({ baseSeconds: fc.double({ min: 0, max: 1e6, noNaN: true }), maxSeconds: fc.double({ min: 0, max: 1e7, noNaN: true }), maxAttempts: fc.constant(8) }),
        attempt,
        unit,
        (policy, n, r) => {
          const delay = retryDelaySeconds(n, policy, () => r);
          expect(delay).toBeGreaterThanOrEqual(1);
          expect(delay).toBeLessThanOrEqual(SQS_MAX_DELAY_SECONDS);
        },
      ),
    );
  });

  test('the ceiling grows with the attempt: the largest possible delay never shrinks', () => {
    fc.assert(
      fc.property(intPolicy, fc.integer({ min: 1, max: 60 }), (policy, n) => {
        const almostOne = () => 0.999_999_999;
        expect(retryDelaySeconds(n + 1, policy, almostOne)).toBeGreaterThanOrEqual(retryDelaySeconds(n, policy, almostOne));
      }),
    );
  });

  test('jitter spreads the delay: random 0 gives 1 s, random near 1 gives the ceiling', () => {
    expect(retryDelaySeconds(1, DEFAULT_BACKOFF, () => 0)).toBe(1);
    expect(retryDelaySeconds(1, DEFAULT_BACKOFF, () => 0.999)).toBe(2);
    expect(retryDelaySeconds(4, DEFAULT_BACKOFF, () => 0.999)).toBe(16);
    expect(retryDelaySeconds(30, DEFAULT_BACKOFF, () => 0.999)).toBe(900);
    expect(retryDelaySeconds(5000, DEFAULT_BACKOFF, () => 0.5)).toBe(450);
  });

  test('attempt 0 or less is treated as the first retry', () => {
    expect(retryDelaySeconds(0, DEFAULT_BACKOFF, () => 0.999)).toBe(2);
    expect(retryDelaySeconds(-3, DEFAULT_BACKOFF, () => 0.999)).toBe(2);
  });

  // DOUBTFUL (shared/domain/backoff.ts retryDelaySeconds): with a fractional base (RETRY_BASE_SECONDS=1.5 passes the
  // settings schema) the ceiling itself can be returned, e.g. 1.5 s, but SQS DelaySeconds is an Integer. Fix: floor the
  // ceiling (Math.max(1, Math.floor(ceiling))) or make RETRY_BASE_SECONDS an integer in settings.
  test('delays are whole seconds even for a fractional base', () => {
    const policy: BackoffPolicy = { baseSeconds: 1.5, maxSeconds: 900, maxAttempts: 8 };
    // first retry: ceiling 1.5, random 0.9 -> ceil(1.35) = 2 -> min(1.5, 2) = 1.5
    expect(Number.isInteger(retryDelaySeconds(1, policy, () => 0.9))).toBe(true);
  });

  test('hasAttemptsLeft: attempts strictly below maxAttempts', () => {
    const policy = { ...DEFAULT_BACKOFF, maxAttempts: 3 };
    expect([0, 1, 2, 3, 4].map((n) => hasAttemptsLeft(n, policy))).toEqual([true, true, true, false, false]);
  });
});
