import type { LocalStack } from '../../local/stack';
import {
  duplicateSendsWithThrottledStarts,
  duplicateTrialPools,
  fencingSettings,
  flowAndJobDeletedWhileRunning,
  nonCharacterArgumentsInFullPool,
  serverErrorsAfterStartingUnderLoad,
  startAnsweredWithServerError,
  steadyGlueThrottling,
} from './setup/fencingScenarios';
import { startFaultStack } from './workload';

/**
 * The defects of fencing.test.ts (issue 8), longer and many times over. This file's stack keeps the `local` stage's
 * retry attempts (8), waits at most 2 s between retries, and gives up on a run after 6 s (the maximum run time).
 */
const MAX_RUN_SECONDS = 6;
/** Trials of scenario 1, each on 6 pools of limit 1 with 4 jobs each: the race is a matter of milliseconds, so many. */
const TRIALS = 24;
const TRIAL_POOLS = 6;
const SEED = Number(process.env.SLUICE_FENCING_SEED ?? 8);

const trials = Array.from({ length: TRIALS }, (_, trial) => duplicateTrialPools(trial, TRIAL_POOLS));
const POOLS = {
  ...Object.fromEntries(trials.flat().map((p) => [p, 1])),
  fivexxa: 1,
  fivexxg: 1,
  fivexxmix: 2,
  odd: 1,
  deleted: 2,
  steady: 1,
};

let stack: LocalStack;
beforeAll(async () => {
  // 150 pools: a reconciler pass visits every one, and the checks wait for whole passes (2 s, the local stage's
  // budget, is not enough for all of them on a busy machine with the DynamoDB fault layer's retries).
  stack = await startFaultStack(POOLS, {
    env: { ...fencingSettings({ maxRunSeconds: MAX_RUN_SECONDS, retryMaxSeconds: 2 }), RECONCILE_BUDGET_SECONDS: '30' },
  });
}, 60_000);
afterAll(() => stack?.stop());
afterEach(() => stack.simulator.clearFaults());

describe('the same job sent twice, 0-20 ms apart, with throttled starts, in pools of 1: never two runs at once (24 trials)', () => {
  test.each(trials.map((pools, trial) => [trial, pools] as const))(
    'trial %i',
    async (trial, pools) => {
      await duplicateSendsWithThrottledStarts(stack, { pools, seed: SEED * 1_000 + trial, jobs: 4 });
    },
    60_000,
  );
});

test('a long AppFlow run whose start was answered 500: no other job of its pool runs meanwhile', async () => {
  await startAnsweredWithServerError(stack, {
    pool: 'fivexxa',
    head: 'appflow',
    error: 'InternalServerException',
    behind: 4,
    headRunMs: 4_000,
  });
}, 60_000);

test('a long Glue run whose start was answered 500: no second run, no other job of its pool meanwhile', async () => {
  await startAnsweredWithServerError(stack, {
    pool: 'fivexxg',
    head: 'glue',
    error: 'InternalServiceException',
    behind: 4,
    headRunMs: 4_000,
  });
}, 60_000);

test('three starts of each kind answered 500 after their runs started, in a busy pool of 2: each job runs once, within the limit', async () => {
  await serverErrorsAfterStartingUnderLoad(stack, { pool: 'fivexxmix', limit: 2, jobs: 12, failing: 3 });
}, 90_000);

test('Glue jobs with U+FFFF / U+FFFE in argument values and keys, each in a full pool with a job behind it: the pool never blocks', async () => {
  await nonCharacterArgumentsInFullPool(stack, {
    pool: 'odd',
    odd: [
      { '--note': 'before\uffffafter' },
      { '--tag': '\ufffe', '--day': '2026-11-22' },
      { '--key\uffff': 'value' },
      { '--both': '\ufffe\uffff' },
    ],
    timeoutMs: 40_000,
  });
}, 90_000);

test('a flow and a Glue job deleted while their runs go on, their events lost, six jobs behind: the slots come back by the maximum run time', async () => {
  await flowAndJobDeletedWhileRunning(stack, { pool: 'deleted', behind: 6, runMs: 2_000, maxRunMs: MAX_RUN_SECONDS * 1_000 });
}, 90_000);

test('a Glue job refused (ConcurrentRunsExceededException) 16 times in a row (twice the old attempt limit): it runs once the refusals stop', async () => {
  // Twice the 8 attempts the retries had before they were bounded by time (the local stage's retryForSeconds: 120).
  await steadyGlueThrottling(stack, { pool: 'steady', refusals: 16, behind: 3, timeoutMs: 70_000 });
}, 90_000);
