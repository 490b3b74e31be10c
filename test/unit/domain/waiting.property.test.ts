import fc from 'fast-check';
import { MAX_PRIORITY, rankOf, reservationIsStale, turnOf, waitKey } from '../../../shared/domain/waiting';

const jobId = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,20}$/);
// Epoch ms from 1970 to well past 2286 (when epoch ms reach 11 digits... and 13 -> 14 digits at year 5138).
const time = fc.integer({ min: 0, max: 99_999_999_999_999 });

describe('wait keys', () => {
  test('sorting keys as strings sorts by time first, then by job id', () => {
    fc.assert(
      fc.property(fc.array(fc.record({ at: time, id: jobId }), { minLength: 2, maxLength: 30 }), (entries) => {
        const byKey = [...entries].sort((a, b) => cmp(waitKey(a.at, a.id), waitKey(b.at, b.id)));
        const byTimeThenId = [...entries].sort((a, b) => a.at - b.at || cmp(a.id, b.id));
        expect(byKey.map((e) => [e.at, e.id])).toEqual(byTimeThenId.map((e) => [e.at, e.id]));
      }),
    );
  });

  test('an earlier time always sorts first, whatever the ids', () => {
    fc.assert(
      fc.property(time, time, jobId, jobId, (t1, t2, id1, id2) => {
        fc.pre(t1 < t2);
        expect(cmp(waitKey(t1, id1), waitKey(t2, id2))).toBe(-1);
      }),
    );
  });

  test('a key is stable: the same arrival gives the same key (a retried job keeps its place)', () => {
    fc.assert(fc.property(time, jobId, (t, id) => expect(waitKey(t, id)).toBe(waitKey(t, id))));
  });

  test('format: priority (1,000,000 - p, 7 digits), round (12 digits), time (15 digits), id; fractions floored, negatives clamped', () => {
    expect(waitKey(1_767_225_600_000, 'job-1')).toBe('1000000#000000000000#001767225600000#job-1');
    expect(waitKey(12.9, 'a')).toBe('1000000#000000000000#000000000000012#a');
    expect(waitKey(-5, 'a')).toBe('1000000#000000000000#000000000000000#a');
    expect(waitKey(5, 'a', { priority: 7, rank: 3 })).toBe('0999993#000000000003#000000000000005#a');
    expect(waitKey(5, 'a', { priority: -1_000_000 })).toBe('2000000#000000000000#000000000000005#a');
    expect(rankOf(waitKey(5, 'a', { rank: 42 }))).toBe(42);
  });

  const order = fc.record({
    priority: fc.integer({ min: -MAX_PRIORITY, max: MAX_PRIORITY }),
    rank: fc.integer({ min: 0, max: 999_999_999_999 }),
  });

  test('two keys share a turn exactly when they share priority and round, whatever their times and ids', () => {
    fc.assert(
      fc.property(fc.record({ at: time, id: jobId, order }), fc.record({ at: time, id: jobId, order }), (a, b) => {
        const same = a.order.priority === b.order.priority && a.order.rank === b.order.rank;
        expect(turnOf(waitKey(a.at, a.id, a.order)) === turnOf(waitKey(b.at, b.id, b.order))).toBe(same);
        expect(turnOf(waitKey(a.at, a.id, a.order)) === turnOf(waitKey(b.at, b.id, { ...a.order }))).toBe(true);
      }),
    );
  });

  test('sorting keys sorts by priority (higher first), then round (lower first), then time, then id', () => {
    fc.assert(
      fc.property(fc.array(fc.record({ at: time, id: jobId, order }), { minLength: 2, maxLength: 30 }), (entries) => {
        const byKey = [...entries].sort((a, b) => cmp(waitKey(a.at, a.id, a.order), waitKey(b.at, b.id, b.order)));
        const expected = [...entries].sort(
          (a, b) => b.order.priority - a.order.priority || a.order.rank - b.order.rank || a.at - b.at || cmp(a.id, b.id),
        );
        expect(byKey.map((e) => [e.order, e.at, e.id])).toEqual(expected.map((e) => [e.order, e.at, e.id]));
      }),
    );
  });
});

describe('reservationIsStale', () => {
  test('stale only strictly after the grace period', () => {
    expect(reservationIsStale(1000, 1000 + 120_000, 120_000)).toBe(false);
    expect(reservationIsStale(1000, 1000 + 120_001, 120_000)).toBe(true);
    expect(reservationIsStale(1000, 500, 120_000)).toBe(false);
  });
});

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
