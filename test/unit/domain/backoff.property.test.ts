import fc from 'fast-check';
import {
  withinRetryBudget,
  type BackoffPolicy,
  DEFAULT_BACKOFF,
  retryDelaySeconds,
  SQS_MAX_DELAY_SECONDS,
} from '../../../shared/domain/backoff';

const unit = fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true });
const attempt = fc.integer({ min: 1, max: 200 });
const intPolicy = fc.record({
  baseSeconds: fc.integer({ min: 1, max: 120 }),
  maxSeconds: fc.integer({ min: 1, max: 5_000 }),
  retryForSeconds: fc.constant(3600),
});

describe('retry backoff (equal jitter)', () => {
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
        fc.record({
          baseSeconds: fc.double({ min: 0, max: 1e6, noNaN: true }),
          maxSeconds: fc.double({ min: 0, max: 1e7, noNaN: true }),
          retryForSeconds: fc.constant(3600),
        }),
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

  test('jitter spreads the delay over the upper half: random 0 gives half the ceiling, random near 1 the ceiling', () => {
    expect(retryDelaySeconds(1, DEFAULT_BACKOFF, () => 0)).toBe(1);
    expect(retryDelaySeconds(1, DEFAULT_BACKOFF, () => 0.999)).toBe(2);
    expect(retryDelaySeconds(4, DEFAULT_BACKOFF, () => 0)).toBe(8);
    expect(retryDelaySeconds(4, DEFAULT_BACKOFF, () => 0.999)).toBe(16);
    expect(retryDelaySeconds(30, DEFAULT_BACKOFF, () => 0.999)).toBe(900);
    expect(retryDelaySeconds(5000, DEFAULT_BACKOFF, () => 0)).toBe(450);
    expect(retryDelaySeconds(5000, DEFAULT_BACKOFF, () => 0.5)).toBe(675);
  });

  test('once capped, a delay is never under half the cap: at most 2 x 3600 / cap tries an hour', () => {
    fc.assert(
      fc.property(attempt, unit, (n, r) => {
        const delay = retryDelaySeconds(n + 10, DEFAULT_BACKOFF, () => r);
        expect(delay).toBeGreaterThanOrEqual(DEFAULT_BACKOFF.maxSeconds / 2);
      }),
    );
  });

  test('attempt 0 or less is treated as the first retry', () => {
    expect(retryDelaySeconds(0, DEFAULT_BACKOFF, () => 0.999)).toBe(2);
    expect(retryDelaySeconds(-3, DEFAULT_BACKOFF, () => 0.999)).toBe(2);
  });

  // DOUBTFUL (shared/domain/backoff.ts retryDelaySeconds): with a fractional base (RETRY_BASE_SECONDS=1.5 passes the
  // settings schema) the ceiling itself can be returned, e.g. 1.5 s, but SQS DelaySeconds is an Integer. Fix: floor the
  // ceiling (Math.max(1, Math.floor(ceiling))) or make RETRY_BASE_SECONDS an integer in settings.
  test('delays are whole seconds even for a fractional base', () => {
    const policy: BackoffPolicy = { baseSeconds: 1.5, maxSeconds: 900, retryForSeconds: 3600 };
    // first retry: ceiling 1.5, random 0.9 -> ceil(1.35) = 2 -> min(1.5, 2) = 1.5
    expect(Number.isInteger(retryDelaySeconds(1, policy, () => 0.9))).toBe(true);
  });

  test('the retry budget is time since the first start call, not a count of attempts', () => {
    const policy = { ...DEFAULT_BACKOFF, retryForSeconds: 3600 };
    expect(withinRetryBudget(1_000, 1_000 + 3_599_999, policy)).toBe(true);
    expect(withinRetryBudget(1_000, 1_000 + 3_600_000, policy)).toBe(false);
  });

  test('waiting on capacity for the whole budget ends after it, in tens of tries, not thousands (issue 8, defect 4)', () => {
    // Steady throttling: the sum of the largest delays over the budget. At the cap (900 s) a job tries 4 times an hour.
    const policy = DEFAULT_BACKOFF;
    let elapsed = 0;
    let attempts = 0;
    while (withinRetryBudget(0, elapsed * 1000, policy)) elapsed += retryDelaySeconds(++attempts, policy, () => 0.999999);
    expect(elapsed).toBeGreaterThanOrEqual(policy.retryForSeconds);
    expect(attempts).toBeLessThanOrEqual(Math.ceil(policy.retryForSeconds / 900) + 10);
  });
});
