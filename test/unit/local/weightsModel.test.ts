import fc from 'fast-check';
import { endToStart, unitsOverTime } from '../../../bench/scenarios/flowControl';
import { type ModelJob, modelRuns } from '../../../bench/weightsModel';
import { BACKFILL_LOOKAHEAD } from '../../../shared/app/backfill';

const startOf = (runs: ReturnType<typeof modelRuns>, job: number) => runs.find((run) => run.job === job)!.startedAt;

describe('the weights model: the scenario jobs through the admission rule alone', () => {
  // Budget 3: job 0 holds 2 units until 100 ms; job 1 (3 units) waits for them; job 2 (1 unit, 50 ms) fits now.
  const jobs = (limits: boolean): ModelJob[] =>
    [
      { units: 2, runMs: 100, runLimitMs: 100 },
      { units: 3, runMs: 50, runLimitMs: 50 },
      { units: 1, runMs: 50, runLimitMs: 50 },
    ].map(({ runLimitMs, ...job }) => (limits ? { ...job, runLimitMs } : job));

  test('without run limits a job behind a blocked head waits for it (strict order)', () => {
    const runs = modelRuns(jobs(false), 3, 0);
    expect([startOf(runs, 0), startOf(runs, 1), startOf(runs, 2)]).toEqual([0, 100, 150]);
  });

  test('with run limits the light job ends before the head could start, so it starts at once (backfill)', () => {
    const runs = modelRuns(jobs(true), 3, 0);
    expect([startOf(runs, 0), startOf(runs, 1), startOf(runs, 2)]).toEqual([0, 100, 0]);
  });

  test('units come back `gapMs` after a run ends', () => {
    const runs = modelRuns(jobs(false), 3, 10);
    expect([startOf(runs, 1), startOf(runs, 2)]).toEqual([110, 170]);
    expect(endToStart(runs)).toBe(10);
  });

  test('never more units in use than the budget; every job runs once; strict order starts jobs in wait order', () => {
    const job = fc.record({
      units: fc.integer({ min: 1, max: 10 }),
      runMs: fc.integer({ min: 1, max: 500 }),
      factor: fc.option(fc.double({ min: 1, max: 3, noNaN: true })),
    });
    fc.assert(
      fc.property(fc.array(job, { minLength: 1, maxLength: 40 }), fc.integer({ min: 0, max: 50 }), (specs, gap) => {
        const modelJobs: ModelJob[] = specs.map(({ units, runMs, factor }) => ({
          units,
          runMs,
          ...(factor !== null && { runLimitMs: Math.ceil(runMs * factor) }),
        }));
        const runs = modelRuns(modelJobs, 10, gap);
        expect(runs.map((run) => run.job).sort((a, b) => a - b)).toEqual(modelJobs.map((_, i) => i));
        expect(unitsOverTime(runs, (run) => modelJobs[run.job]!.units, 10).max).toBeLessThanOrEqual(10);
        const strict = modelRuns(
          modelJobs.map(({ runLimitMs: _, ...rest }) => rest),
          10,
          gap,
        );
        expect(strict.map((run) => run.job)).toEqual(modelJobs.map((_, i) => i));
      }),
    );
  });

  test("a run's units are free only `gapMs` after its end, even for an admission another end makes meanwhile", () => {
    // budget 2: jobs 0 and 1 end at 100 and 150; job 2 needs both units, so it waits for job 1's to come back at 250
    const runs = modelRuns(
      [
        { units: 1, runMs: 100 },
        { units: 1, runMs: 150 },
        { units: 2, runMs: 10 },
      ],
      2,
      100,
    );
    expect(startOf(runs, 2)).toBe(250);
  });

  test('backfill goes by the declared run limit, not the run time: a job whose limit ends after the shadow time waits', () => {
    // as the first case, but job 2 runs 50 ms and declares 150: it could end by 100, its limit says it might not
    const runs = modelRuns(
      [
        { units: 2, runMs: 100, runLimitMs: 100 },
        { units: 3, runMs: 50, runLimitMs: 50 },
        { units: 1, runMs: 50, runLimitMs: 150 },
      ],
      3,
      0,
    );
    expect(startOf(runs, 2)).toBe(150);
  });

  test(`backfill looks at the head and the ${BACKFILL_LOOKAHEAD - 1} waiters behind it, as a release does`, () => {
    // budget 3: a holder until 100, a blocked head of 3 units, then fillers too heavy to backfill (2 units, 1 free),
    // then a light job that would fit: let in only if it is within the look-ahead
    const jobs = (fillers: number): ModelJob[] => [
      { units: 2, runMs: 100, runLimitMs: 100 },
      { units: 3, runMs: 50, runLimitMs: 50 },
      ...Array.from({ length: fillers }, () => ({ units: 2, runMs: 10, runLimitMs: 10 })),
      { units: 1, runMs: 50, runLimitMs: 50 },
    ];
    const light = (fillers: number) => startOf(modelRuns(jobs(fillers), 3, 0), fillers + 2);
    expect(light(BACKFILL_LOOKAHEAD - 2)).toBe(0);
    expect(light(BACKFILL_LOOKAHEAD - 1)).toBeGreaterThan(0);
  });

  test('a job heavier than the budget is an error, not a loop', () => {
    expect(() => modelRuns([{ units: 4, runMs: 10 }], 3, 0)).toThrow(/can never start/);
  });
});

describe('endToStart: how long units idle from a run end to the next start', () => {
  test('the first wave does not count; each later start counts from the last end before it', () => {
    const span = (startedAt: number, endedAt: number, seq: number) => ({ startedAt, endedAt, startSeq: seq, endSeq: seq + 100 });
    // ends at 100 and 130; starts at 0 (first wave), 110 (10 after 100), 150 (20 after 130), 160 (30 after 130)
    expect(endToStart([span(0, 100, 1), span(0, 130, 2), span(110, 200, 3), span(150, 300, 4), span(160, 400, 5)])).toBe(20);
  });
});
