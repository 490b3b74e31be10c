import fc from 'fast-check';
import {
  ArrivalKind,
  BUCKET_MS,
  DUE_SHARDS,
  delaySecondsUntilDue,
  dueAtOf,
  dueAtOfSortKey,
  dueBucket,
  dueSortKey,
  dueUpToBound,
  eligibleSince,
  HORIZON_MS,
  minuteOf,
  minutesToLoad,
  onArrival,
  shardOf,
} from '../../../shared/domain/notBefore';
import { waitKey } from '../../../shared/domain/waiting';
import { JobSpecSchema } from '../../../shared/kinds/registry';

const T0 = Date.UTC(2026, 10, 24, 6, 0, 0);
const times = fc.integer({ min: T0 - 86_400_000, max: T0 + 30 * 86_400_000 });
const ids = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,20}$/);

describe('notBefore on a job spec', () => {
  const spec = { id: 'a', kind: 'appflow', flowName: 'f' };

  test.each(['2026-11-27T02:00:00+01:00', '2026-11-27T02:00:00Z', '2026-11-27T02:00:00.250-05:30'])('accepts %s', (notBefore) => {
    expect(JobSpecSchema.parse({ ...spec, notBefore }).notBefore).toBe(notBefore);
  });

  test.each([
    ['no offset', '2026-11-27T02:00:00'],
    ['a date only', '2026-11-27'],
    ['words', 'friday 2am'],
    ['a month 13', '2026-13-01T00:00:00Z'],
    ['a number', 1764205200000],
  ])('refuses %s with a clear error', (_why, notBefore) => {
    const result = JobSpecSchema.safeParse({ ...spec, notBefore });
    expect(result.success).toBe(false);
    expect(result.error!.issues[0]!.path).toEqual(['notBefore']);
    expect(result.error!.issues.map((i) => i.message).join()).toMatch(/notBefore must be an ISO 8601 time with an offset/);
  });

  test('dueAtOf reads the offset: the same instant written two ways is one due time', () => {
    expect(dueAtOf({ notBefore: '2026-11-27T02:00:00+01:00' })).toBe(dueAtOf({ notBefore: '2026-11-27T01:00:00Z' }));
    expect(dueAtOf({})).toBeUndefined();
  });
});

describe('where a job waits until it is due', () => {
  test('due now or in the past: at once; within a second: waited for; within 15 minutes: an SQS delay; later: the due index', () => {
    fc.assert(
      fc.property(fc.option(times, { nil: undefined }), times, ids, (dueAt, now, id) => {
        const arrival = onArrival(dueAt, now, id);
        if (dueAt === undefined || dueAt <= now) return arrival.kind === ArrivalKind.Now;
        const left = dueAt - now;
        if (left < 1000) return arrival.kind === ArrivalKind.Wait && arrival.until === dueAt;
        if (left <= HORIZON_MS) {
          // The delayed copy lands at most a second before it is due, never after, within SQS's 0..900.
          if (arrival.kind !== ArrivalKind.Delay) return false;
          const landsAt = now + arrival.delaySeconds * 1000;
          return Number.isInteger(arrival.delaySeconds) && arrival.delaySeconds <= 900 && landsAt <= dueAt && dueAt - landsAt < 1000;
        }
        return arrival.kind === ArrivalKind.Index && arrival.bucket === dueBucket(dueAt, id) && dueAtOfSortKey(arrival.sortKey) === dueAt;
      }),
    );
  });

  test('a delay is whole seconds from 0 to 900 whatever the times', () => {
    fc.assert(
      fc.property(times, times, (dueAt, now) => {
        const delay = delaySecondsUntilDue(dueAt, now);
        return Number.isInteger(delay) && delay >= 0 && delay <= 900;
      }),
    );
  });
});

describe('the due index', () => {
  test('a job is in the bucket of its due minute, in one of the shards; shards are stable per id', () => {
    fc.assert(
      fc.property(times, ids, (dueAt, id) => {
        const [minute, shard] = dueBucket(dueAt, id).split('#').map(Number);
        return minute === Math.floor(dueAt / BUCKET_MS) && shard === shardOf(id) && shard! >= 0 && shard! < DUE_SHARDS;
      }),
    );
  });

  test('sort keys order by due time, then id; the bound of a time keeps exactly the jobs due at or before it', () => {
    fc.assert(
      fc.property(times, ids, times, ids, (a, idA, bound, idB) => {
        const ka = dueSortKey(a, idA);
        const kb = dueSortKey(bound, idB);
        if (a !== bound && ka < kb !== a < bound) return false;
        return ka <= dueUpToBound(bound) === a <= bound;
      }),
    );
  });

  test('the minutes to load run from the cursor to the end of the horizon; a minute is whole only if it ends within it', () => {
    fc.assert(
      fc.property(times, fc.integer({ min: 0, max: 120 }), (now, back) => {
        const cursor = minuteOf(now) - back;
        const minutes = minutesToLoad(cursor, now);
        const end = now + HORIZON_MS;
        if (minutes[0]!.minute !== cursor || minutes[minutes.length - 1]!.minute !== minuteOf(end)) return false;
        return minutes.every(({ minute, whole }, i) => minute === cursor + i && whole === (minute + 1) * BUCKET_MS <= end + 1);
      }),
    );
  });
});

describe('queue position of a job with notBefore', () => {
  test('it counts from notBefore, not from when it was sent: a job due at t waits behind one that arrived before t', () => {
    fc.assert(
      fc.property(times, fc.integer({ min: 1, max: 86_400_000 }), fc.integer({ min: 1, max: 86_400_000 }), (sentAt, ahead, gap) => {
        const dueAt = sentAt + ahead; // sent long before it is due
        const earlier = waitKey(eligibleSince(dueAt - gap, undefined), 'b'); // an ordinary job arriving before it is due
        const later = waitKey(eligibleSince(dueAt + gap, undefined), 'c'); // one arriving after
        const scheduled = waitKey(eligibleSince(sentAt, dueAt), 'a');
        return earlier < scheduled && scheduled < later;
      }),
    );
  });

  test('a job arriving after its notBefore counts from its arrival', () => {
    expect(eligibleSince(T0 + 5000, T0)).toBe(T0 + 5000);
    expect(eligibleSince(T0, T0 + 5000)).toBe(T0 + 5000);
  });
});
