import fc from 'fast-check';
import { reservationIsStale, waitKey } from '../../../shared/domain/waiting';

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

  test('format: 15 zero-padded digits, #, the id; fractions floored, negatives clamped to 0', () => {
    expect(waitKey(1_767_225_600_000, 'job-1')).toBe('001767225600000#job-1');
    expect(waitKey(12.9, 'a')).toBe('000000000000012#a');
    expect(waitKey(-5, 'a')).toBe('000000000000000#a');
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
