import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { QUICK, runBench, type BenchOutput } from '../../bench/runBench';

/**
 * The benchmark's smoke run (`npm run bench -- --quick`), in process, on the emulators of globalSetup: every scenario,
 * tiny. Checks that the results have every field with sane values, not the numbers themselves.
 */
let out: BenchOutput;
let dir: string;

beforeAll(async () => {
  const sqs = process.env.SLUICE_TEST_SQS_ENDPOINT;
  const dynamodb = process.env.SLUICE_TEST_DYNAMODB_ENDPOINT;
  if (!sqs || !dynamodb) throw new Error('the bench smoke test needs the emulators of test/integration/setup/globalSetup.ts');
  dir = await mkdtemp(path.join(os.tmpdir(), 'sluice-bench-'));
  out = await runBench({
    params: QUICK,
    endpoints: { sqs, dynamodb },
    nameSuffix: `-bench-${randomUUID().slice(0, 8)}`,
    emulators: 'shared by the integration tests',
    outDir: dir,
    command: 'jest test/integration/bench.test.ts',
    timeoutMs: 60_000,
  });
  // The capacity run starts DynamoDB Local (a JVM) in a process of its own: about 90 s in all here, 220 s beside a
  // CPU-bound process. A deadline for a hang, not a measure.
}, 600_000);

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

const SCHEDULERS = ['sluice', 'batches', 'poller', 'backoff'] as const;

test('hand-off latency: exact pairs, ordered percentiles', () => {
  const h = out.results.handoff!;
  expect(h.n).toBeGreaterThan(0);
  expect(h.p50Ms).toBeGreaterThanOrEqual(0);
  expect(h.p50Ms).toBeLessThanOrEqual(h.p99Ms);
  expect(h.p99Ms).toBeLessThanOrEqual(h.maxMs);
  expect(h.maxMs).toBeLessThan(10_000);
  // One hop (handOffStart releaser, the local stage's default): the releaser makes the start call, no acquirer step.
  expect(h.detail.profile.rows.some((row) => row.phase === 'releaser' && row.call.includes('TransactWriteItems'))).toBe(true);
  expect(h.detail.profile.rows.some((row) => row.phase === 'acquirer')).toBe(false);
  // Under load most hand-offs are the releaser's; the acquirer's own releases (a refused start, an early completion)
  // still go by the queue.
  expect(h.detail.oneHop).toBeGreaterThan(h.n / 2);
  expect(h.detail.wakeUpsPerHandoff).toBeLessThan(0.5);
});

test('burst: hand-offs while the jobs arrive, the shortfall below the limit, and the rest left waiting in a paused pool', () => {
  const b = out.results.burst!;
  expect(b).toMatchObject({ jobs: QUICK.burst.jobs, limit: QUICK.burst.limit });
  expect(b.detail.handoffs.n + b.detail.handoffsAfter.n).toBeGreaterThan(0);
  expect(b.handoffP50Ms).toBeLessThanOrEqual(b.handoffP99Ms);
  expect(b.shortfallSlotSeconds).toBeGreaterThanOrEqual(0);
  expect(b.detail.shortfallShare).toBeLessThanOrEqual(1);
  expect(b.detail.minInProgress).toBeLessThanOrEqual(QUICK.burst.limit);
  expect(b.detail.started).toBeGreaterThanOrEqual(QUICK.burst.limit);
});

test('utilization and efficiency for Sluice and the three baselines, within the limit', () => {
  const { utilization, efficiency, schedulers } = out.results;
  for (const name of SCHEDULERS) {
    expect(utilization![name]).toBeGreaterThan(0);
    expect(utilization![name]).toBeLessThanOrEqual(1.01);
    expect(efficiency![name]).toBeGreaterThan(0);
    expect(efficiency![name]).toBeLessThanOrEqual(1.05);
    expect(schedulers![name].jobs).toBe(QUICK.utilization.jobs);
    expect(schedulers![name].maxConcurrency).toBeLessThanOrEqual(QUICK.limit);
  }
});

test('requests per job for each backlog, by service, with a total', () => {
  const rpj = out.results.requestsPerJob!;
  expect(Object.keys(rpj).sort()).toEqual(QUICK.requests.backlogs.map(String).sort());
  for (const row of Object.values(rpj)) {
    for (const field of ['sqs', 'dynamodb', 'jobApi', 'lambda'] as const) expect(row[field]).toBeGreaterThan(0);
    expect(row.total).toBeCloseTo(row.sqs + row.dynamodb + row.jobApi + row.lambda + row.events, 1);
    expect(row.jobApi).toBeCloseTo(1, 0); // one start call per job
  }
  // Checking a running job: a read of its record (and a status call to its job API), the reconciler's own calls only.
  expect(out.results.reconciler!.perHolder.ops['dynamodb.GetItem']).toBe(1);
  expect(out.results.reconciler!.perHolder.total).toBeGreaterThan(1);
});

test('throughput, cost, machine and date', () => {
  const r = out.results;
  expect(r.throughput!.jobsPerSecond).toBeGreaterThan(0);
  // The same run with the functions in worker threads, in a process of its own: every job through, counted the same way.
  expect(r.throughputThreads).toMatchObject({ threadsPerFunction: QUICK.throughput.threads, jobs: QUICK.throughput.jobs });
  expect(r.throughputThreads!.jobsPerSecond).toBeGreaterThan(0);
  expect(r.throughputThreads!.requestsPerJob.total).toBeGreaterThan(5);
  expect(r.throughput!.poolItemWritesPerJob).toBeGreaterThanOrEqual(2);
  expect(r.costPerMillionJobsUsd).toBeGreaterThan(0);
  expect(r.costPerMillionJobsUsd).toBeLessThan(1000);
  expect(r.machine.cores).toBeGreaterThan(0);
  expect(r.machine.node).toMatch(/^v\d+/);
  expect(Number.isNaN(Date.parse(r.date))).toBe(false);
  // Issue 23's seven goals first, in its table's order, then the earlier ones.
  expect(r.goals.filter((g) => g.issue === 23).map((g) => g.id)).toEqual([
    'race-lost',
    'race-p99',
    'rate-burst',
    'weights',
    'hotspot',
    'requests',
    'cost',
  ]);
  expect(r.goals).toHaveLength(7 + 17);
  // Issue 13's six goals left in the earlier table and issue 23's seven carry the figure before their work.
  expect(r.goals.filter((g) => g.issue === 13 && g.before !== undefined)).toHaveLength(6);
  expect(r.goals.filter((g) => g.issue === 23 && g.before !== undefined)).toHaveLength(7);
  // Repeated scenarios: how many runs, and each run's figure beside the median (QUICK runs them once).
  expect(r.runs).toEqual({ handoff: QUICK.runs, throughput: QUICK.runs });
  expect(r.handoff!.spread.p99Ms!.values).toEqual([r.handoff!.p99Ms]);
  expect(r.throughput!.spread.jobsPerSecond!.values).toEqual([r.throughput!.jobsPerSecond]);
});

test('the wall-clock seconds of each scenario, and of the shared stack, in the order they ran', () => {
  const r = out.results;
  expect(Object.keys(r.scenarioSeconds)).toEqual([
    'stack',
    'handoff',
    'burst',
    'utilization',
    'requests',
    'throughput',
    'weights',
    'rateLimit',
    'fairness',
    'schedule',
    'hotspot',
    'race',
    'capacity',
  ]);
  const seconds = Object.values(r.scenarioSeconds);
  for (const s of seconds) expect(Number.isInteger(s) && s >= 0).toBe(true);
  // Each rounded to the second; what is left of durationSeconds is writing the results.
  expect(seconds.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(r.durationSeconds + seconds.length);
  expect(r.scenarioSeconds.capacity).toBeGreaterThan(0); // DynamoDB Local's start alone takes a second or more
});

test('flow control: the small tenant takes turns (within its bound); weighted units never pass the budget; start calls of a rated pool', () => {
  const f = out.results.fairness!;
  expect(f.smallJobs).toBe(QUICK.fairness.smallJobs);
  expect(f.smallTenantLastStartHandOffs).toBeGreaterThanOrEqual(f.smallJobs);
  expect(f.boundHandOffs).toBe(2 * f.smallJobs);
  const w = out.results.weights!;
  expect(w.maxUnitsInUse).toBeGreaterThan(0);
  expect(w.maxUnitsInUse).toBeLessThanOrEqual(QUICK.weights.budget);
  expect(w.unitUtilization).toBeGreaterThan(0);
  expect(w.unitUtilization).toBeLessThanOrEqual(1);
  // Both rounds ran every job, within the budget: without run limits (strict order) and with them (backfill).
  for (const round of [w.strictOrder, w.backfill]) {
    expect(round.maxUnitsInUse).toBeLessThanOrEqual(QUICK.weights.budget);
    expect(round.makespanMs).toBeGreaterThan(0);
    // The same jobs through the admission rule alone (bench/weightsModel.ts), and the gap that idles units here.
    expect(round.endToStartMs).toBeGreaterThanOrEqual(0);
    for (const share of [round.model!.noGap, round.model!.atGap]) {
      expect(share).toBeGreaterThan(0);
      expect(share).toBeLessThanOrEqual(1);
    }
  }
  const q = out.results.rateLimit!;
  expect(q.jobs).toBe(QUICK.rateLimit.jobs);
  expect(q.maxStartsInAnySecond).toBeGreaterThan(0);
  // Start calls follow the booked times, but two jobs both late for theirs (a busy machine) may call in the same ms.
  expect(q.minGapMs).toBeGreaterThanOrEqual(0);
  expect(q.rateUtilization).toBeGreaterThan(0);
});

test('capacity per job by limit, on DynamoDB Local: write and read units, the counter share, jobs/s', () => {
  const c = out.results.capacityPerJob!;
  expect(Object.keys(c).sort()).toEqual(QUICK.capacity.limits.map(String).sort());
  for (const row of Object.values(c)) {
    expect(row.wcu).toBeGreaterThan(0);
    expect(row.rcu).toBeGreaterThan(0);
    expect(row.counterWcu).toBeGreaterThan(0);
    expect(row.counterWcu).toBeLessThan(row.wcu);
    expect(row.hotItemJobsPerSecondAws).toBeCloseTo(1000 / row.counterWcu, -1);
    expect(row.jobsPerSecondLocal).toBeGreaterThan(0);
  }
  for (const detail of Object.values(out.results.capacity!.byLimit)) {
    expect(detail.admitted.handedOff).toBeGreaterThan(0);
    expect(detail.reconciler.scopeLeaks).toBe(0);
  }
});

test('writes results.json, RESULTS.md and the two charts', async () => {
  const names = out.files.map((f) => path.basename(f)).sort();
  expect(names).toEqual(['RESULTS.md', 'concurrency.svg', 'requests-per-job.svg', 'results.json']);
  expect(JSON.parse(await readFile(path.join(dir, 'results.json'), 'utf8'))).toHaveProperty('handoff.p50Ms');
  for (const svg of ['concurrency.svg', 'requests-per-job.svg'])
    expect(await readFile(path.join(dir, svg), 'utf8')).toMatch(/^<svg [^>]*>[\s\S]*<\/svg>$/);
  expect(await readFile(path.join(dir, 'RESULTS.md'), 'utf8')).toContain('## Hand-off latency');
});

test('schedule: lateness from notBefore to the start call, the open jobs held', () => {
  const s = out.results.schedule!;
  expect(s).toMatchObject({ n: QUICK.schedule.spreadJobs, openJobs: QUICK.schedule.openJobs, hotspot: null });
  // None before its time; percentiles ordered.
  expect(s.detail.spread.startedEarly).toBe(0);
  expect(s.p50LatenessMs).toBeGreaterThanOrEqual(0);
  expect(s.p50LatenessMs).toBeLessThanOrEqual(s.maxLatenessMs);
  // The held jobs are not loaded (due a day ahead): the loader read its buckets and sent none.
  expect(s.detail.held.loader).toMatchObject({ loaded: 0, finished: true });
});

test('hotspot: the jobs due in one second all started on the limited and the unlimited pool, the unlimited one with no transaction', () => {
  const x = out.results.hotspot!;
  expect(x.jobs).toBe(QUICK.hotspot.jobs);
  for (const side of [x.limited, x.unlimited]) {
    expect(side.started).toBe(QUICK.hotspot.jobs);
    expect(side.p50LatenessMs).toBeLessThanOrEqual(side.p99LatenessMs);
    expect(side.jobsPerSecond).toBeGreaterThan(0);
  }
  // Every job of the limited pool takes and gives back its unit of the counter in a transaction; the unlimited pool's take none.
  expect(x.limited.transactItems).toBeGreaterThanOrEqual(2 * QUICK.hotspot.jobs);
  expect(x.unlimited.transactItems).toBeLessThan(x.limited.transactItems);
  expect(x.ratio.jobsPerSecond).toBeCloseTo(x.unlimited.jobsPerSecond / x.limited.jobsPerSecond, 1);
});

test('hand-off race: every rate measured on each engine asked, the hand-offs counted, percentiles ordered', () => {
  const race = out.results.race!;
  expect(Object.keys(race.byEngine)).toEqual(QUICK.race.engines);
  for (const levels of Object.values(race.byEngine)) {
    expect(levels!.map((l) => l.rate)).toEqual(QUICK.race.rates);
    for (const l of levels!) {
      expect(l.handoffs).toBeGreaterThanOrEqual(QUICK.race.minHandoffs);
      expect(l.lostRacesPerHandoff).toBeGreaterThanOrEqual(0);
      expect(l.handoffP50Ms).toBeLessThanOrEqual(l.handoffP99Ms);
      expect(l.callP50Ms).toBeGreaterThan(0);
      expect(l.callP50Ms!).toBeLessThanOrEqual(l.callP99Ms!);
    }
  }
});

test('start-rate bursts: each bigger burst on a pool of its own, its starts and refused writes counted', () => {
  const bursts = out.results.rateBursts!;
  expect(bursts.map((b) => [b.startsPerSecond, b.jobs])).toEqual(QUICK.rateLimit.bursts.map((b) => [b.startsPerSecond, b.jobs]));
  for (const b of bursts) {
    expect(b.startsOfAllowed).toBeGreaterThan(0);
    expect(b.failedWritesPerStart).toBeGreaterThanOrEqual(0);
  }
});

test('the ended index counted in the write units: a job that ends files one entry', () => {
  // Requests per job at a backlog: every job in the window ends once (its release files it on the ended index), and a
  // release is a transaction (2 units) at a counted pool. Without the entry the units would be the writes' alone.
  for (const row of Object.values(out.results.requestsPerJob!)) expect(row.dynamodbWriteUnits).toBeGreaterThan(row.dynamodbWrites + 2);
  for (const detail of Object.values(out.results.capacity!.byLimit)) expect(detail.endedWcu).toBeGreaterThan(0);
});
