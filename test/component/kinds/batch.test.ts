import { BatchClient } from '@aws-sdk/client-batch';
import { TransientStartError } from '../../../shared/errors';
import { batch } from '../../../shared/kinds/batch';
import { jobNameOf } from '../../../shared/kinds/batch/spec';
import { ENDED_JOB_LISTED_MS } from '../../../shared/kinds/batch/listing';
import { BatchStarter, CLOCK_SKEW_MARGIN_MS, JOB_LOOKUP_EXPIRED, JOB_LOOKUP_LIMIT } from '../../../shared/kinds/batch/starter';
import { type JobApiSimulator, startJobApiSimulator } from '../../../local/simulators';
import { type JobStarter, RunStatus } from '../../../shared/ports/jobStarter';
import { waitFor } from '../../support/waitFor';
import type { JobSpec } from '../../../shared/kinds/registry';

/**
 * What Batch adds to the conformance suite: Batch has no client token, so a resumed start finds the job an earlier
 * call submitted by its name (ListJobs, JOB_NAME): a start whose answer was lost, then a resumed start, gives one job.
 * The search takes only the job's own name (the filter ignores case), only jobs since the job's first start request,
 * and a search that cannot finish submits nothing. Batch forgets a job a day after it ended: its status is then gone,
 * and a search that late cannot prove there was none. The simulator's clock is the test's (and the starter's): no waiting.
 */

let sim: JobApiSimulator;
let now = Date.UTC(2026, 10, 22, 9);
let starter: JobStarter;
beforeAll(async () => {
  sim = await startJobApiSimulator({ durationMs: (_kind, name) => (name.startsWith('slow-') ? 3_600_000 : 50), now: () => now });
  Object.assign(process.env, {
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'batch',
    AWS_SECRET_ACCESS_KEY: 'batch',
    AWS_ENDPOINT_URL_BATCH: sim.endpoint,
  });
  // The production starter on the test's clock (it tells how long ago a job's first start was requested).
  starter = new BatchStarter(new BatchClient({ maxAttempts: 1 }), { now: () => now });
});
afterAll(() => sim?.close());
afterEach(() => sim.clearFaults());

const job = (id: string, jobDefinition = 'slow-etl'): JobSpec =>
  batch.schema.parse({ kind: 'batch', id, jobQueue: 'sluice-queue', jobDefinition }) as JobSpec;
const jobsNamed = (name: string) => sim.runs().filter((r) => r.kind === 'batch' && r.args.jobName === name);
const submitsSince = (at: number) => sim.startCalls().filter((c) => c.kind === 'batch' && c.at >= at);

test('a start that submitted but lost its answer, then a resumed start: one job, found by its name', async () => {
  const requestedSince = now;
  sim.setFaults({ batch: { failStartsAfterStarting: { count: 1, error: 'ServerException' } } });
  const spec = job('lost-1');
  const error = await starter.start(spec, { requestedSince }).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(TransientStartError);
  expect(error).toMatchObject({ code: 'ServerException', definite: false });
  const [submitted] = jobsNamed(jobNameOf('lost-1'));
  expect(submitted).toBeDefined();
  now += 60_000;
  const resumed = await starter.start(spec, { mayHaveStarted: true, requestedSince });
  expect(resumed.executionId).toBe(submitted!.executionId);
  expect(jobsNamed(jobNameOf('lost-1'))).toHaveLength(1);
  // One SubmitJob in all: the resumed start only searched.
  expect(submitsSince(requestedSince)).toHaveLength(1);
  expect(await starter.status(spec, resumed.executionId)).toBe(RunStatus.InProgress);
  await starter.stop(spec, resumed.executionId);
});

test('Batch itself is not idempotent: without the search a second start submits a second job', async () => {
  const spec = job('twice-1');
  const first = await starter.start(spec);
  const second = await starter.start(spec);
  expect(second.executionId).not.toBe(first.executionId);
  expect(jobsNamed(jobNameOf('twice-1'))).toHaveLength(2);
  for (const { executionId } of [first, second]) await starter.stop(spec, executionId);
});

test("the search takes its own job's name only: a job whose name differs in case is another job's", async () => {
  const requestedSince = now;
  const upper = await starter.start(job('Case-1'));
  const lower = await starter.start(job('case-1'), { mayHaveStarted: true, requestedSince });
  expect(lower.executionId).not.toBe(upper.executionId);
  expect(jobsNamed(jobNameOf('case-1')).map((r) => r.executionId)).toEqual([lower.executionId]);
  for (const { executionId } of [upper, lower]) await starter.stop(job('case-1'), executionId);
});

test('a job of the same name created before the first start request (less the clock margin) is an earlier use of the id', async () => {
  const old = await starter.start(job('reused-1'));
  now += CLOCK_SKEW_MARGIN_MS + 60_000;
  const fresh = await starter.start(job('reused-1'), { mayHaveStarted: true, requestedSince: now });
  expect(fresh.executionId).not.toBe(old.executionId);
  // Within the margin it is the job's own: clocks may disagree by that much.
  const again = await starter.start(job('reused-1'), { mayHaveStarted: true, requestedSince: now + CLOCK_SKEW_MARGIN_MS - 1 });
  expect(again.executionId).toBe(fresh.executionId);
  for (const { executionId } of [old, fresh]) await starter.stop(job('reused-1'), executionId);
});

test('a search that fails, or reaches its page cap, is uncertain and submits nothing', async () => {
  sim.setFaults({ batch: { throttleStatusCalls: 1 } });
  const throttled = await starter.start(job('search-1'), { mayHaveStarted: true }).catch((e: unknown) => e);
  expect(throttled).toMatchObject({ code: 'TooManyRequestsException', definite: false });
  expect(jobsNamed(jobNameOf('search-1'))).toEqual([]);

  // Three jobs whose names match the filter but not exactly (case), one per page, two pages searched.
  for (const id of ['SEARCH-2', 'Search-2', 'sEarch-2']) await starter.start(job(id));
  now += 1000;
  const searchedAt = now;
  const capped = new BatchStarter(new BatchClient({ maxAttempts: 1 }), { maxLookupPages: 2, pageSize: 1, now: () => now });
  const error = await capped.start(job('search-2'), { mayHaveStarted: true }).catch((e: unknown) => e);
  expect(error).toMatchObject({ code: JOB_LOOKUP_LIMIT, definite: false });
  expect(submitsSince(searchedAt)).toEqual([]);
});

test('Batch forgets a job a day after it ended: its status is then gone, and its stop finds nothing to stop', async () => {
  const spec = job('gone-1');
  const { executionId } = await starter.start(spec);
  // A job in progress is kept however long it runs.
  now += 2 * ENDED_JOB_LISTED_MS;
  expect(await starter.status(spec, executionId)).toBe(RunStatus.InProgress);
  await starter.stop(spec, executionId);
  now += ENDED_JOB_LISTED_MS - 1;
  expect(await starter.status(spec, executionId)).toBe(RunStatus.Failed);
  now += 1;
  expect(await starter.status(spec, executionId)).toBe(RunStatus.Gone);
  await expect(starter.stop(spec, executionId)).resolves.toBe('already-ended');
});

test('a resumed start a day after the first start request submits nothing: an earlier job may have ended and dropped out', async () => {
  const requestedSince = now;
  sim.setFaults({ batch: { failStartsAfterStarting: { count: 1, error: 'ServerException' } } });
  const spec = job('late-1', 'quick-etl');
  await expect(starter.start(spec, { requestedSince })).rejects.toMatchObject({ code: 'ServerException', definite: false });
  const [earlier] = jobsNamed(jobNameOf('late-1'));
  await waitForEnd(earlier!.executionId);
  // A day after it ended Batch no longer lists the earlier job: a search cannot tell it was there.
  now += ENDED_JOB_LISTED_MS;
  expect(await starter.status(spec, earlier!.executionId)).toBe(RunStatus.Gone);
  const resumedAt = now;
  const error = await starter.start(spec, { mayHaveStarted: true, requestedSince }).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(TransientStartError);
  expect(error).toMatchObject({ code: JOB_LOOKUP_EXPIRED, definite: false });
  expect(submitsSince(resumedAt)).toEqual([]);
  expect(jobsNamed(jobNameOf('late-1'))).toHaveLength(1);
  // Within the day (less the clock margin) the search still proves it: the earlier job is found.
  const recent = job('late-2', 'quick-etl');
  const { executionId } = await starter.start(recent, { requestedSince: now });
  now += ENDED_JOB_LISTED_MS - CLOCK_SKEW_MARGIN_MS - 1;
  await expect(starter.start(recent, { mayHaveStarted: true, requestedSince: resumedAt })).resolves.toEqual({ executionId });
});

/** The simulator ends a `quick-` job after 50 ms of real time (its clock is the test's, its timers are real). */
const waitForEnd = (executionId: string) =>
  waitFor(`the end of job ${executionId}`, () => sim.runs().find((r) => r.executionId === executionId)?.endedAt !== undefined, 10_000, 5);

test('job names stay within Batch rules for every id Sluice accepts, one per id', () => {
  const ids = ['a', 'A.b_c-d', 'org:acme:order-7', 'x'.repeat(121), 'x'.repeat(122), 'z'.repeat(128), 'Order-1', 'order-1'];
  for (const id of ids) expect(jobNameOf(id)).toMatch(/^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/);
  expect(jobNameOf('order-1')).toBe('sluice-order-1');
  expect(jobNameOf('org:acme:order-7')).toMatch(/^sluiceh-org_acme_order-7-[0-9a-f]{20}$/);
  expect(new Set(ids.map(jobNameOf)).size).toBe(ids.length);
  expect(jobNameOf('org:acme')).not.toBe(jobNameOf('org_acme'));
});
