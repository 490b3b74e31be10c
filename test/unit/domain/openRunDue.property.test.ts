import fc from 'fast-check';
import { openRunDue, type OpenRunClock } from '../../../shared/domain/jobSets';

/** When the reconciler reads an open run's records: counts are hints, so a missed count must be repaired soon. */
const QUIET = 90_000;
const EVERY = 15 * 60_000;
const rules = { quietMs: QUIET, everyMs: EVERY };

const runs = fc
  .record({
    total: fc.integer({ min: 1, max: 5_000 }),
    ended: fc.integer({ min: 0, max: 5_000 }),
    startedAt: fc.integer({ min: 0, max: 1e9 }),
    countedAfter: fc.option(fc.integer({ min: 0, max: 1e7 }), { nil: undefined }),
    checkedAfter: fc.option(fc.integer({ min: 0, max: 1e7 }), { nil: undefined }),
  })
  .map(({ total, ended, startedAt, countedAfter, checkedAfter }): OpenRunClock => ({
    total,
    ended,
    startedAt,
    ...(countedAfter !== undefined && { countedAt: startedAt + countedAfter }),
    ...(checkedAfter !== undefined && { checkedAt: startedAt + checkedAfter }),
  }));

test('counted to its total: always due', () => {
  fc.assert(fc.property(runs, fc.nat(), (run, later) => openRunDue({ ...run, ended: run.total }, run.startedAt + later, rules)));
});

test('a count missed: once counting has been quiet for the quiet period, the run is read (unless read since its last count)', () => {
  fc.assert(
    fc.property(runs, fc.integer({ min: 0, max: 1e7 }), (run, quietFor) => {
      const counted = { ...run, ended: Math.min(run.ended, run.total - 1), countedAt: run.countedAt ?? run.startedAt + 1 };
      const now = counted.countedAt + quietFor;
      const readSince = counted.checkedAt !== undefined && counted.checkedAt >= counted.countedAt;
      const due = openRunDue(counted, now, rules);
      if (quietFor >= QUIET && !readSince) expect(due).toBe(true);
      // while counts may still be on their way, and the run not overdue for its periodic read, it is not read
      if (quietFor < QUIET && now - (counted.checkedAt ?? counted.startedAt) <= EVERY) expect(due).toBe(false);
    }),
  );
});

test('read once per quiet spell: after a read, the run is not due again until a new count or the periodic read', () => {
  fc.assert(
    fc.property(runs, fc.integer({ min: 0, max: EVERY }), (run, after) => {
      const counted = { ...run, ended: Math.min(run.ended, run.total - 1), countedAt: run.countedAt ?? run.startedAt };
      const read = { ...counted, checkedAt: counted.countedAt + 1 };
      expect(openRunDue(read, read.checkedAt + after, rules)).toBe(false);
    }),
  );
});

test('a run never counted is read every period', () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 100 }), fc.integer({ min: 0, max: 1e9 }), (total, startedAt) => {
      const run = { total, ended: 0, startedAt };
      expect(openRunDue(run, startedAt + EVERY, rules)).toBe(false);
      expect(openRunDue(run, startedAt + EVERY + 1, rules)).toBe(true);
    }),
  );
});
