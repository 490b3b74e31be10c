import fc from 'fast-check';
import { nearlyCounted, openRunDue, type OpenRunClock } from '../../../shared/domain/jobSets';

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

test('counted to its total: due, unless read since its last count (a count made twice)', () => {
  fc.assert(
    fc.property(runs, fc.nat(), (run, later) => {
      const full = { ...run, ended: run.total + (run.ended % 3) };
      const readSince = full.checkedAt !== undefined && full.countedAt !== undefined && full.checkedAt >= full.countedAt;
      const now = Math.max(full.checkedAt ?? 0, full.countedAt ?? 0, full.startedAt) + (later % EVERY);
      expect(openRunDue(full, now, rules)).toBe(!readSince || now - (full.checkedAt ?? full.startedAt) > EVERY);
    }),
  );
});

test('a last count missed: once counting has been quiet for the quiet period, a nearly counted run is read (unless read since)', () => {
  fc.assert(
    fc.property(runs, fc.integer({ min: 0, max: 1e7 }), fc.integer({ min: 1, max: 100 }), (run, quietFor, missing) => {
      const short = Math.min(missing, nearlyCounted(run.total), run.total);
      const counted = { ...run, ended: run.total - short, countedAt: run.countedAt ?? run.startedAt + 1 };
      const now = counted.countedAt + quietFor;
      const readSince = counted.checkedAt !== undefined && counted.checkedAt >= counted.countedAt;
      const due = openRunDue(counted, now, rules);
      if (quietFor >= QUIET && !readSince) expect(due).toBe(true);
      // while counts may still be on their way, and the run not overdue for its periodic read, it is not read
      if (quietFor < QUIET && now - (counted.checkedAt ?? counted.startedAt) <= EVERY) expect(due).toBe(false);
    }),
  );
});

test('a run still far from counted is not read for its quiet spells, only every period (its records may be 5,000)', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 2, max: 5_000 }),
      fc.integer({ min: 0, max: 1e9 }),
      fc.integer({ min: 0, max: EVERY }),
      (total, startedAt, after) => {
        const run = { total, ended: total - nearlyCounted(total) - 1, startedAt, countedAt: startedAt };
        if (run.ended < 0) return;
        expect(openRunDue(run, startedAt + after, rules)).toBe(false);
        expect(openRunDue(run, startedAt + EVERY + 1, rules)).toBe(true);
      },
    ),
  );
});

test('read once per quiet spell: after a read that found many jobs open, not due again until a new count or the periodic read', () => {
  fc.assert(
    fc.property(runs, fc.integer({ min: 0, max: EVERY }), fc.nat(), (run, after, more) => {
      const counted = { ...run, countedAt: run.countedAt ?? run.startedAt };
      const read = { ...counted, checkedAt: counted.countedAt + 1, checkedOpen: nearlyCounted(run.total) + 1 + (more % 100) };
      expect(openRunDue(read, read.checkedAt + after, rules)).toBe(false);
      const unknown = { ...counted, checkedAt: counted.countedAt + 1 };
      expect(openRunDue(unknown, unknown.checkedAt + after, rules)).toBe(false);
    }),
  );
});

test('a read that found few jobs open is made again each quiet period, count or none (the last count may be the one missed)', () => {
  fc.assert(
    fc.property(runs, fc.integer({ min: 0, max: 2 * QUIET }), fc.nat(), (run, after, open) => {
      const counted = { ...run, countedAt: run.countedAt ?? run.startedAt };
      const read = { ...counted, checkedAt: counted.countedAt + 1, checkedOpen: open % (nearlyCounted(run.total) + 1) };
      if (after >= QUIET) expect(openRunDue(read, read.checkedAt + after, rules)).toBe(true);
      else if (read.ended < read.total) expect(openRunDue(read, read.checkedAt + after, rules)).toBe(false);
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
