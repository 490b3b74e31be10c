import fc from 'fast-check';
import {
  candidatesToRead,
  handOffOrder,
  lastRaceAt,
  marksRace,
  RACE_MARK_REFRESH_MS,
  SPREAD_MEMORY_MS,
  SPREAD_WIDTH,
  spreadOf,
  spreadWidth,
} from '../../../shared/domain/handOffPick';
import { waitKey } from '../../../shared/domain/waiting';

/** A waiting list as a releaser reads it: wait keys ascending (priority, round, arrival, id), with the job's priority. */
const waitingList = fc
  .array(
    fc.record({
      priority: fc.constantFrom(0, 0, 0, 5, -3),
      rank: fc.integer({ min: 0, max: 4 }),
      at: fc.integer({ min: 0, max: 1_000 }),
    }),
    { minLength: 1, maxLength: 80 },
  )
  .map((entries) =>
    entries
      .map((e, i) => ({ priority: e.priority, rank: e.rank, waitKey: waitKey(e.at, `w${i}`, { priority: e.priority, rank: e.rank }) }))
      .sort((a, b) => (a.waitKey < b.waitKey ? -1 : 1)),
  );
const width = fc.integer({ min: 1, max: 64 });
const spread = fc.integer({ min: 0, max: 2 ** 32 - 1 });

describe('the hand-off pick', () => {
  test('every waiter read is tried once: the order is a permutation of the list', () => {
    fc.assert(
      fc.property(waitingList, width, spread, (list, w, s) => {
        const order = handOffOrder(list, w, s);
        expect([...order].sort((a, b) => (a.waitKey < b.waitKey ? -1 : 1))).toEqual(list);
      }),
    );
  });

  test('width 1 is wait order exactly', () => {
    fc.assert(fc.property(waitingList, spread, (list, s) => expect(handOffOrder(list, 1, s)).toEqual(list)));
  });

  test('never picks below a higher priority nor past a fair round: the first tried has the head priority and round', () => {
    fc.assert(
      fc.property(waitingList, width, spread, (list, w, s) => {
        expect(handOffOrder(list, w, s)[0]!.priority).toBe(list[0]!.priority);
        expect(handOffOrder(list, w, s)[0]!.rank).toBe(list[0]!.rank);
      }),
    );
  });

  test('bounded overtaking: each waiter tried has fewer than `width` untried waiters ahead of it, all of its priority and round', () => {
    fc.assert(
      fc.property(waitingList, width, spread, (list, w, s) => {
        const order = handOffOrder(list, w, s);
        const tried = new Set<string>();
        for (const waiter of order) {
          const ahead = list.filter((other) => other.waitKey < waiter.waitKey && !tried.has(other.waitKey));
          // Within the window: fewer than width ahead, none of another priority or round. Past it (fallback): wait order.
          if (ahead.length > 0) {
            expect(ahead.length).toBeLessThan(w);
            expect(ahead.every((other) => other.priority === waiter.priority && other.rank === waiter.rank)).toBe(true);
          }
          tried.add(waiter.waitKey);
        }
      }),
    );
  });

  test('after the pick, its window goes on cyclically, then the rest in wait order', () => {
    const list = Array.from({ length: 10 }, (_, i) => ({ waitKey: waitKey(i, `w${i}`) }));
    expect(handOffOrder(list, 4, 6).map((w) => w.waitKey.split('#')[3])).toEqual([
      'w2',
      'w3',
      'w0',
      'w1',
      'w4',
      'w5',
      'w6',
      'w7',
      'w8',
      'w9',
    ]);
    // A window cut short by a lower priority.
    const mixed = [...list.slice(0, 3), { waitKey: waitKey(0, 'low', { priority: -1 }) }];
    expect(handOffOrder(mixed, 8, 4).map((w) => w.waitKey.split('#')[3])).toEqual(['w1', 'w2', 'w0', 'low']);
    expect(handOffOrder([], 8, 4)).toEqual([]);
  });

  test('collisions bounded: n releasers (distinct job ids) reading the same >= n waiters lose about what a uniform pick loses', () => {
    // Expected losers when n releasers each pick uniformly among k: n - k * (1 - (1 - 1/k)^n).
    const n = 16;
    const k = SPREAD_WIDTH;
    const uniform = n - k * (1 - (1 - 1 / k) ** n);
    const list = Array.from({ length: 200 }, (_, i) => ({ waitKey: waitKey(i, `w${i}`) }));
    fc.assert(
      fc.property(fc.array(fc.uniqueArray(fc.uuid(), { minLength: n, maxLength: n }), { minLength: 300, maxLength: 300 }), (groups) => {
        let losers = 0;
        for (const ids of groups) {
          const firsts = new Set(ids.map((id) => handOffOrder(list, k, spreadOf(id))[0]!.waitKey));
          losers += n - firsts.size;
        }
        // 300 bursts: the mean's standard deviation is about 0.1, the margin about 8 of them.
        expect(losers / groups.length).toBeLessThan(uniform * 1.25);
      }),
      { numRuns: 5 },
    );
  });

  test('releasers holding consecutive tickets that read the same list pick distinct waiters while the window has room', () => {
    fc.assert(
      fc.property(waitingList, fc.integer({ min: 0, max: 2 ** 31 }), fc.integer({ min: 1, max: 40 }), width, (list, first, n, w) => {
        const sameOrder = (x: (typeof list)[number]) => x.priority === list[0]!.priority && x.rank === list[0]!.rank;
        const window = Math.min(w, list.filter(sameOrder).length);
        fc.pre(n <= window && list.slice(0, window).every(sameOrder));
        const picks = Array.from({ length: n }, (_, i) => handOffOrder(list, w, first + i)[0]!.waitKey);
        expect(new Set(picks).size).toBe(n);
      }),
    );
  });

  test('the spread of job ids that differ only in their last characters is uniform over the window', () => {
    const buckets = new Array<number>(SPREAD_WIDTH).fill(0);
    const ids = 64_000;
    for (let i = 0; i < ids; i++) buckets[spreadOf(`job-${i}`) % SPREAD_WIDTH]!++;
    const mean = ids / SPREAD_WIDTH;
    for (const count of buckets) expect(Math.abs(count - mean)).toBeLessThan(mean * 0.15); // 4.7 standard deviations of a uniform spread
    expect(spreadOf('job-1')).toBe(spreadOf('job-1'));
  });

  test('a releaser spreads only for a while after it lost a race on the limit; it reads its whole window then', () => {
    expect(spreadWidth(undefined, 1_000)).toBe(1);
    expect(spreadWidth(1_000, 1_000)).toBe(SPREAD_WIDTH);
    expect(spreadWidth(1_000, 1_000 + SPREAD_MEMORY_MS - 1)).toBe(SPREAD_WIDTH);
    expect(spreadWidth(1_000, 1_000 + SPREAD_MEMORY_MS)).toBe(1);
    expect(spreadWidth(1_000, 1_000, 1)).toBe(1);
    expect(spreadWidth(1_000, 1_000, 8)).toBe(8);
    expect([candidatesToRead(1), candidatesToRead(SPREAD_WIDTH)]).toEqual([2, SPREAD_WIDTH]);
  });

  test("the last race a releaser knows is its own loss or the list's mark, whichever is newer; it spreads for either", () => {
    const time = fc.option(fc.integer({ min: 0, max: 10 ** 12 }), { nil: undefined });
    fc.assert(
      fc.property(time, time, fc.integer({ min: 0, max: 2 * SPREAD_MEMORY_MS }), (own, mark, after) => {
        const last = lastRaceAt(own, mark);
        const known = [own, mark].filter((t): t is number => t !== undefined);
        expect(last).toBe(known.length ? Math.max(...known) : undefined);
        // A releaser spreads while the newer of the two is under a minute old.
        const now = (last ?? 0) + after;
        expect(spreadWidth(last, now)).toBe(last !== undefined && after < SPREAD_MEMORY_MS ? SPREAD_WIDTH : 1);
      }),
    );
  });

  test('a loser marks the list unless the mark it knows is under half a memory old: one write per half minute at most', () => {
    expect(RACE_MARK_REFRESH_MS).toBe(SPREAD_MEMORY_MS / 2);
    expect(marksRace(undefined, 1_000)).toBe(true);
    expect(marksRace(1_000, 1_000)).toBe(false);
    expect(marksRace(1_000, 1_000 + RACE_MARK_REFRESH_MS - 1)).toBe(false);
    expect(marksRace(1_000, 1_000 + RACE_MARK_REFRESH_MS)).toBe(true);
    // A mark from a clock ahead of this one is fresh, not a reason to write
    expect(marksRace(5_000, 1_000)).toBe(false);
  });
});

test('a spread never picks past a waiter of other units: a heavy head is neither overtaken by lighter jobs nor robbed by heavier ones', () => {
  const key = (n: number) => `5#0#000${n}#w${n}`;
  const list = [
    { waitKey: key(0), units: 4 },
    { waitKey: key(1), units: 1 },
    { waitKey: key(2), units: 1 },
    { waitKey: key(3), units: 2 },
  ];
  for (let spread = 0; spread < 8; spread++)
    expect(handOffOrder(list, 64, spread, (w) => w.units).map((w) => w.waitKey)).toEqual(list.map((w) => w.waitKey));
  // Equal units: the window spreads as before.
  const same = list.map((w) => ({ ...w, units: 1 }));
  expect(handOffOrder(same, 64, 2, (w) => w.units)[0]!.waitKey).toBe(key(2));
});
