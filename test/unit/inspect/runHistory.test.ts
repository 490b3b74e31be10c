import fc from 'fast-check';
import { DURATION_BINS_MS, inWindow, runHistories, runHistory, type RunTimes } from '../../../shared/inspect/runHistory';

const H = 3600_000;
const NOW = 100 * H;
const job = (fields: Partial<RunTimes> & { state: string }): RunTimes => ({ pool: 'default', updatedAt: NOW - H, ...fields });

test('a night of runs: the most in progress per bucket, the counts of the day and the durations', () => {
  const jobs = [
    // 02:00-03:00 and 02:30-04:00 overlap: two at once from 02:30 to 03:00.
    job({ state: 'succeeded', startedAt: NOW - 10 * H, endedAt: NOW - 9 * H }),
    job({ state: 'failed', startedAt: NOW - 9.5 * H, endedAt: NOW - 8 * H }),
    // Still running: counted to now.
    job({ state: 'running', startedAt: NOW - 2 * H }),
    // Ended two days ago: not in the window.
    job({ state: 'succeeded', startedAt: NOW - 50 * H, endedAt: NOW - 49 * H }),
    // Dead-lettered before it ever started: counted as dead, never in progress.
    job({ state: 'dead', deadLetteredAt: NOW - 5 * H, updatedAt: NOW - 5 * H }),
    job({ pool: 'other', state: 'queued' }),
  ];
  const history = runHistory(jobs, NOW, { buckets: 24, pools: ['empty'] });
  expect(history).toMatchObject({ from: NOW - 24 * H, to: NOW, bucketMs: H });
  expect(history.pools.map((p) => p.pool)).toEqual(['default', 'empty', 'other']);
  const pool = history.pools[0]!;
  // Hour 14 (10 h ago): two at once; hour 15: one; the run ending 8 h ago ends as hour 16 begins: not counted there.
  expect(pool.inProgress).toEqual([...Array(14).fill(0), 2, 1, 0, 0, 0, 0, 0, 0, 1, 1]);
  expect(pool).toMatchObject({ succeeded: 1, failed: 1, dead: 1 });
  expect(pool.durations).toEqual({ count: 2, p50: H, p90: 1.5 * H, max: 1.5 * H, bins: [0, 0, 0, 0, 2, 0, 0] });
  expect(history.pools[1]).toEqual({ pool: 'empty', inProgress: Array(24).fill(0), succeeded: 0, failed: 0, dead: 0 });
});

test('a slot handed over at one instant is counted once; a run of seconds still shows in its bucket', () => {
  const jobs = [
    job({ state: 'succeeded', startedAt: NOW - 3 * H, endedAt: NOW - 2.5 * H }),
    job({ state: 'succeeded', startedAt: NOW - 2.5 * H, endedAt: NOW - 2 * H }),
    job({ state: 'failed', startedAt: NOW - 1.5 * H, endedAt: NOW - 1.5 * H + 2_000 }),
  ];
  const { inProgress } = runHistory(jobs, NOW, { buckets: 24 }).pools[0]!;
  expect(inProgress.slice(21)).toEqual([1, 1, 0]);
  const { inProgress: fine } = runHistory(jobs, NOW, { buckets: 48 }).pools[0]!;
  // Half hours: the two handed over, none, the run of 2 s, none.
  expect(fine.slice(42)).toEqual([1, 1, 0, 1, 0, 0]);
});

test('durations fall in the bins by their upper bounds', () => {
  const lengths = [59_000, 60_000, 10 * 60_000, 30 * 60_000, 2 * H, 5 * H, 13 * H];
  const jobs = lengths.map((ms) => job({ state: 'succeeded', startedAt: NOW - H - ms, endedAt: NOW - H }));
  const durations = runHistory(jobs, NOW).pools[0]!.durations!;
  expect(durations.bins).toEqual([1, 1, 1, 1, 1, 1, 1]);
  expect(durations.bins).toHaveLength(DURATION_BINS_MS.length + 1);
  expect(durations).toMatchObject({ count: 7, p50: 30 * 60_000, p90: 13 * H, max: 13 * H });
});

test('inWindow keeps what the history can use and nothing older', () => {
  expect(inWindow(job({ state: 'succeeded', startedAt: NOW - 30 * H, endedAt: NOW - 23 * H }), NOW)).toBe(true);
  expect(inWindow(job({ state: 'succeeded', startedAt: NOW - 30 * H, endedAt: NOW - 25 * H }), NOW)).toBe(false);
  expect(inWindow(job({ state: 'running', startedAt: NOW - 30 * H }), NOW)).toBe(true);
  expect(inWindow(job({ state: 'dead', deadLetteredAt: NOW - H }), NOW)).toBe(true);
  expect(inWindow(job({ state: 'queued' }), NOW)).toBe(false);
});

test('property: each bucket holds the most runs in progress at any instant of it (brute force over every start and end)', () => {
  const run = fc.record({ start: fc.integer({ min: 0, max: 1000 }), length: fc.integer({ min: 1, max: 400 }), open: fc.boolean() });
  fc.assert(
    fc.property(fc.array(run, { maxLength: 25 }), fc.integer({ min: 1, max: 20 }), (runs, buckets) => {
      const now = 1000;
      const windowMs = 800;
      const jobs = runs.map((r) =>
        r.open
          ? job({ state: 'running', startedAt: r.start })
          : job({ state: 'succeeded', startedAt: r.start, endedAt: r.start + r.length }),
      );
      const ends = (r: (typeof runs)[number]) => (r.open ? Infinity : r.start + r.length);
      const at = (t: number) => runs.filter((r) => r.start <= t && t < ends(r) && t < now).length;
      const { inProgress, bucketMs } = {
        ...runHistory(jobs, now, { windowMs, buckets }),
        ...runHistory(jobs, now, { windowMs, buckets }).pools[0],
      };
      const from = now - windowMs;
      for (let i = 0; i < buckets; i++) {
        const lo = from + i * bucketMs;
        const hi = lo + bucketMs;
        const instants = [lo, ...runs.flatMap((r) => [r.start, ends(r)]).filter((t) => t > lo && t < hi && t < now)];
        expect(inProgress?.[i] ?? 0).toBe(Math.max(...instants.map(at)));
      }
    }),
    { numRuns: 3000 },
  );
});

test('the windows: the day in 5-minute buckets, the last 6 hours and the last hour closer, each with its own counts', () => {
  const jobs = [
    job({ state: 'failed', startedAt: NOW - 5 * H, endedAt: NOW - 4 * H }),
    job({ state: 'succeeded', startedAt: NOW - 20 * 60_000, endedAt: NOW - 10 * 60_000 }),
  ];
  const histories = runHistories(jobs, NOW, ['default']);
  expect(Object.keys(histories)).toEqual(['24h', '6h', '1h']);
  expect(histories['24h']).toMatchObject({ from: NOW - 24 * H, bucketMs: 5 * 60_000 });
  expect(histories['1h']).toMatchObject({ from: NOW - H, bucketMs: 15_000 });
  expect(histories['1h'].pools[0]!.inProgress).toHaveLength(240);
  expect(histories['6h'].pools[0]).toMatchObject({ succeeded: 1, failed: 1 });
  expect(histories['1h'].pools[0]).toMatchObject({ succeeded: 1, failed: 0 });
});
