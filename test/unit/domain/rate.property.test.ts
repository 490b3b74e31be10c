import fc from 'fast-check';
import { book, intervalOf, parseRate, RATE_HORIZON_MS, type RateState } from '../../../shared/domain/rate';

describe('start rates (a generic cell rate)', () => {
  const interval = fc.integer({ min: 1, max: 60_000 });
  const times = fc.array(fc.integer({ min: 0, max: 5_000 }), { minLength: 1, maxLength: 40 });

  test('bookings made in time order are never closer than the interval, never before their request, never past the horizon', () => {
    fc.assert(
      fc.property(interval, times, fc.integer({ min: 0, max: 10_000 }), (intervalMs, gaps, tat0) => {
        let rate: RateState = { intervalMs, tat: tat0 };
        let now = 0;
        const starts: number[] = [];
        for (const gap of gaps) {
          now += gap;
          const booking = book(rate, now);
          if ('retryAt' in booking) {
            // Refused only when the next start is past the horizon; trying at retryAt would be within it.
            expect(Math.max(rate.tat, now)).toBeGreaterThan(now + RATE_HORIZON_MS);
            expect('startAt' in book(rate, booking.retryAt)).toBe(true);
            continue;
          }
          expect(booking.startAt).toBeGreaterThanOrEqual(now);
          expect(booking.startAt).toBeLessThanOrEqual(now + RATE_HORIZON_MS);
          starts.push(booking.startAt);
          rate = { intervalMs, tat: booking.nextTat };
        }
        for (let i = 1; i < starts.length; i++) expect(starts[i]! - starts[i - 1]!).toBeGreaterThanOrEqual(intervalMs);
      }),
    );
  });

  test('a saturated limit books back to back: n starts take (n - 1) intervals, whatever the horizon', () => {
    fc.assert(
      fc.property(interval, fc.integer({ min: 2, max: 50 }), (intervalMs, n) => {
        let rate: RateState = { intervalMs, tat: 0 };
        const starts: number[] = [];
        let now = 0;
        while (starts.length < n) {
          const booking = book(rate, now);
          if ('retryAt' in booking) {
            now = booking.retryAt;
            continue;
          }
          starts.push(booking.startAt);
          rate = { intervalMs, tat: booking.nextTat };
        }
        expect(starts[n - 1]! - starts[0]!).toBe((n - 1) * intervalMs);
      }),
    );
  });

  test.each([
    ['2/s', 2],
    ['30/m', 0.5],
    ['100/h', 100 / 3600],
    ['0.5', 0.5],
    [' 2 / s ', 2],
  ])('parseRate(%j) = %d starts per second', (text, perSecond) => {
    expect(parseRate(text)).toBeCloseTo(perSecond, 10);
  });

  test.each(['', 'fast', '-1/s', '0/s', '2/d', '1/s/s', '5000/s'])('parseRate(%j) is not a rate', (text) => {
    expect(parseRate(text)).toBeUndefined();
  });

  test('intervalOf: the rate\'s interval and a 4% margin for start calls\' latency', () => {
    expect(intervalOf(2)).toBe(520);
    expect(intervalOf(0.5)).toBe(2080);
  });
});
