import fc from 'fast-check';
import {
  type BackfillCandidate,
  endByOf,
  fittingPrefix,
  gatesLeftOver,
  type Holding,
  planBackfill,
  shadowTime,
} from '../../../shared/domain/backfill';

const NOW = 1_000_000;

describe('the shadow time of the head', () => {
  test('now when the head fits the free units, or the units of holders of unknown end would let it in', () => {
    expect(shadowTime(5, [{ units: 5, endBy: NOW + 100 }], 5, NOW)).toBe(NOW);
    // A holder without a declared limit may end at any moment: the head may fit at any moment, so nothing backfills.
    expect(shadowTime(2, [{ units: 3 }, { units: 5, endBy: NOW + 100 }], 5, NOW)).toBe(NOW);
    // Past its end-by: the same.
    expect(
      shadowTime(
        2,
        [
          { units: 3, endBy: NOW - 1 },
          { units: 5, endBy: NOW + 100 },
        ],
        5,
        NOW,
      ),
    ).toBe(NOW);
  });

  test('the earliest end-by at which the units freed by then cover the head', () => {
    const holdings: Holding[] = [
      { units: 5, endBy: NOW + 300 },
      { units: 2, endBy: NOW + 100 },
      { units: 5, endBy: NOW + 200 },
      { units: 1 },
    ];
    // free 2 + unknown 1 = 3; +2 at 100 = 5; +5 at 200 = 10; +5 at 300 = 15
    expect(shadowTime(2, holdings, 5, NOW)).toBe(NOW + 100);
    expect(shadowTime(2, holdings, 10, NOW)).toBe(NOW + 200);
    expect(shadowTime(2, holdings, 15, NOW)).toBe(NOW + 300);
    expect(shadowTime(2, holdings, 16, NOW)).toBeUndefined();
  });

  test("a holder's end-by is when it took its slot plus its declared limit; none without one", () => {
    expect(endByOf(NOW, 500)).toBe(NOW + 500);
    expect(endByOf(NOW, undefined)).toBeUndefined();
  });
});

describe('planBackfill', () => {
  const holdings: Holding[] = [
    { units: 10, endBy: NOW + 1000 },
    { units: 5, endBy: NOW + 400 },
  ];
  // limit 20: 5 free; the head needs 10: shadow time NOW + 400 (5 free + 5 back)

  test('lets in, in wait order, the jobs that fit the free units and end by the shadow time', () => {
    const waiting: BackfillCandidate[] = [
      { units: 10, runMs: 100 }, // the head
      { units: 2, runMs: 300 }, // fits, ends by 400 with the margin of 50
      { units: 1 }, // no declared limit: never
      { units: 2, runMs: 351 }, // ends 1 ms after the shadow time (with the margin)
      { units: 6, runMs: 10 }, // more than the units left
      { units: 3, runMs: 350 }, // fits exactly: 3 units left, ends at 400
      { units: 1, runMs: 1 }, // no units left
    ];
    expect(planBackfill({ free: 5, holdings, waiting, now: NOW, marginMs: 50 })).toEqual({ shadowAt: NOW + 400, picks: [1, 5] });
  });

  test('nothing when the head fits (a plain fill lets it in), when the head may fit at any moment, or when there is no head', () => {
    const behind = { units: 1, runMs: 1 };
    expect(planBackfill({ free: 10, holdings, waiting: [{ units: 10 }, behind], now: NOW, marginMs: 0 }).picks).toEqual([]);
    expect(
      planBackfill({ free: 5, holdings: [...holdings, { units: 5 }], waiting: [{ units: 10 }, behind], now: NOW, marginMs: 0 }).picks,
    ).toEqual([]);
    expect(planBackfill({ free: 5, holdings, waiting: [], now: NOW, marginMs: 0 })).toEqual({ picks: [] });
  });

  test('nothing when the limit was lowered under the head (it cannot start whatever ends)', () => {
    expect(planBackfill({ free: -3, holdings, waiting: [{ units: 20 }, { units: 1, runMs: 1 }], now: NOW, marginMs: 0 })).toEqual({
      picks: [],
    });
  });
});

describe('fill helpers', () => {
  test('fittingPrefix: the waiters from the head on that fit one after another (strict order stops at the first that does not)', () => {
    expect(fittingPrefix([2, 3, 1], 6)).toBe(3);
    expect(fittingPrefix([2, 5, 1], 6)).toBe(1);
    expect(fittingPrefix([10, 1], 6)).toBe(0);
    expect(fittingPrefix([], 6)).toBe(0);
  });

  test('gatesLeftOver: the limits to fill after a hand-over', () => {
    const one = (keys: string[]) => ({ pool: 'p', keys, units: 1 });
    expect(gatesLeftOver(one(['org:a']), one(['org:a']))).toEqual([]);
    expect(gatesLeftOver(one(['org:a']), one([]))).toEqual(['key/org:a']);
    expect(gatesLeftOver(one([]), one(['org:b']))).toEqual([]);
    // Weighted: all of the released job's limits (units may be left over, or have idled before).
    expect(gatesLeftOver({ pool: 'p', keys: ['org:a'], units: 5 }, one(['org:a']))).toEqual(['p', 'key/org:a']);
    expect(gatesLeftOver(one(['org:a']), { pool: 'p', keys: [], units: 5 })).toEqual(['p', 'key/org:a']);
  });
});

// ---- Properties -------------------------------------------------------------------------------------------------

const holdingArb: fc.Arbitrary<Holding> = fc.record(
  { units: fc.integer({ min: 1, max: 10 }), endBy: fc.integer({ min: NOW - 500, max: NOW + 5000 }) },
  { requiredKeys: ['units'] },
);
const candidateArb: fc.Arbitrary<BackfillCandidate> = fc.record(
  { units: fc.integer({ min: 1, max: 10 }), runMs: fc.integer({ min: 1, max: 5000 }) },
  { requiredKeys: ['units'] },
);
const inputArb = fc.record({
  free: fc.integer({ min: -5, max: 20 }),
  holdings: fc.array(holdingArb, { maxLength: 12 }),
  waiting: fc.array(candidateArb, { maxLength: 20 }),
  marginMs: fc.integer({ min: 0, max: 200 }),
});

describe('backfill properties', () => {
  test('only free units: the jobs let in take no more than the units free now, each declares a limit and ends by the shadow time', () => {
    fc.assert(
      fc.property(inputArb, ({ free, holdings, waiting, marginMs }) => {
        const plan = planBackfill({ free, holdings, waiting, now: NOW, marginMs });
        const taken = plan.picks.reduce((sum, i) => sum + waiting[i]!.units, 0);
        expect(taken).toBeLessThanOrEqual(Math.max(0, free));
        expect(plan.picks).not.toContain(0);
        expect([...plan.picks].sort((a, b) => a - b)).toEqual(plan.picks);
        for (const i of plan.picks) {
          expect(waiting[i]!.runMs).toBeDefined();
          expect(NOW + marginMs + waiting[i]!.runMs!).toBeLessThanOrEqual(plan.shadowAt!);
        }
        if (plan.picks.length > 0) expect(waiting[0]!.units).toBeGreaterThan(free);
      }),
    );
  });

  test("the head's shadow time never moves later: not by the jobs let in, nor by holders ending, nor by time passing", () => {
    fc.assert(
      fc.property(
        inputArb,
        fc.array(fc.boolean(), { minLength: 12, maxLength: 12 }),
        fc.integer({ min: 0, max: 6000 }),
        fc.array(fc.integer({ min: 0, max: 200 }), { minLength: 20, maxLength: 20 }),
        ({ free, holdings, waiting, marginMs }, ends, elapsed, lateness) => {
          fc.pre(waiting.length > 0);
          const plan = planBackfill({ free, holdings, waiting, now: NOW, marginMs });
          fc.pre(plan.shadowAt !== undefined);
          const shadowAt = plan.shadowAt!;
          // The jobs let in take their slots within the margin.
          const admitted = plan.picks.map((i, k) => ({
            units: waiting[i]!.units,
            endBy: NOW + Math.min(marginMs, lateness[k]!) + waiting[i]!.runMs!,
          }));
          // Later (never past the shadow time): holders with an end-by are gone once it has come; any may end sooner.
          const later = Math.min(NOW + elapsed, shadowAt);
          const all = [...holdings, ...admitted];
          const stay = all.filter((h, k) => !(h.endBy !== undefined && h.endBy <= later) && !(k < ends.length && ends[k]));
          const freeLater =
            free - admitted.reduce((s, h) => s + h.units, 0) + all.reduce((s, h) => s + h.units, 0) - stay.reduce((s, h) => s + h.units, 0);
          const again = shadowTime(freeLater, stay, waiting[0]!.units, later);
          expect(again).toBeDefined();
          expect(again!).toBeLessThanOrEqual(Math.max(shadowAt, later));
        },
      ),
    );
  });

  test('a whole run: every job starts, never later than strict order would start it if every run took its whole limit, and the limit is never passed', () => {
    const jobArb = fc.record({
      units: fc.integer({ min: 1, max: 10 }),
      declared: fc.option(fc.integer({ min: 1, max: 1000 }), { nil: undefined }),
      // the share of its limit the run takes (a run without a limit takes up to 1000 ms)
      share: fc.double({ min: 0.01, max: 1, noNaN: true }),
    });
    fc.assert(
      fc.property(fc.array(jobArb, { minLength: 1, maxLength: 30 }), fc.integer({ min: 10, max: 20 }), (jobs, limit) => {
        const result = simulate(jobs, limit);
        expect(result.started).toBe(jobs.length);
        expect(result.maxInUse).toBeLessThanOrEqual(limit);
        for (const { start, strictAt } of result.heads) expect(start).toBeLessThanOrEqual(strictAt);
      }),
    );
  });
});

interface SimJob {
  units: number;
  declared?: number;
  share: number;
}

/**
 * All jobs wait at time 0, in order. At each moment: holders whose run ended give their units back, the waiters from
 * the head on that fit start (strict order), then planBackfill's picks start. A run takes at most its declared limit.
 * For each head that could not start, `strictAt`: when strict order would start it from then on (no job let in ahead
 * of it) if every run with a limit took all of it (runs without one end when they do).
 */
function simulate(jobs: SimJob[], limit: number): { started: number; maxInUse: number; heads: Array<{ start: number; strictAt: number }> } {
  const waiting = jobs.map((job, id) => ({ id, ...job }));
  const running: Array<{ units: number; endsAt: number; endBy?: number }> = [];
  const strictAtOf = new Map<number, number>();
  const startOf = new Map<number, number>();
  let now = 0;
  let maxInUse = 0;
  const inUse = () => running.reduce((sum, run) => sum + run.units, 0);
  const start = (job: (typeof waiting)[number]) => {
    const runMs = Math.max(1, Math.floor((job.declared ?? 1000) * job.share));
    running.push({ units: job.units, endsAt: now + runMs, ...(job.declared !== undefined && { endBy: now + job.declared }) });
    startOf.set(job.id, now);
    maxInUse = Math.max(maxInUse, inUse());
  };
  const strictStart = (units: number): number => {
    let available = limit - inUse();
    for (const run of running.map((r) => ({ units: r.units, at: r.endBy ?? r.endsAt })).sort((a, b) => a.at - b.at)) {
      available += run.units;
      if (units <= available) return run.at;
    }
    return Number.POSITIVE_INFINITY;
  };
  for (let step = 0; step < 10_000 && (waiting.length > 0 || running.length > 0); step++) {
    while (waiting.length > 0 && waiting[0]!.units <= limit - inUse()) start(waiting.shift()!);
    if (waiting.length > 0) {
      if (!strictAtOf.has(waiting[0]!.id)) strictAtOf.set(waiting[0]!.id, strictStart(waiting[0]!.units));
      const plan = planBackfill({
        free: limit - inUse(),
        holdings: running.map(({ units, endBy }) => ({ units, ...(endBy !== undefined && { endBy }) })),
        waiting: waiting.map(({ units, declared }) => ({ units, ...(declared !== undefined && { runMs: declared }) })),
        now,
        marginMs: 0,
      });
      for (const i of [...plan.picks].reverse()) start(waiting.splice(i, 1)[0]!);
    }
    if (running.length === 0) break;
    now = Math.min(...running.map((run) => run.endsAt));
    for (let i = running.length - 1; i >= 0; i--) if (running[i]!.endsAt <= now) running.splice(i, 1);
  }
  return {
    started: startOf.size,
    maxInUse,
    heads: [...strictAtOf].map(([id, strictAt]) => ({ start: startOf.get(id) ?? Number.POSITIVE_INFINITY, strictAt })),
  };
}
