import type { LocalStack } from '../../local/stack';
import {
  duplicateSendsWithThrottledStarts,
  duplicateTrialPools,
  fencingSettings,
  flowAndJobDeletedWhileRunning,
  nonCharacterArgumentsInFullPool,
  startAnsweredWithServerError,
  steadyGlueThrottling,
} from './setup/fencingScenarios';
import { startFaultStack } from './workload';

/**
 * Defects found by an adversarial review (issue 8), small and fast; fencing.slow.test.ts runs them longer and many
 * times. This file's stack gives up on a run after 4 s (the maximum run time, locally 120 s) and waits at most 1 s
 * between retries of a refused start.
 */
const MAX_RUN_SECONDS = 4;
/**
 * Trials of scenario 1, each on 6 pools of limit 1 with 4 jobs each; the seed makes the input of each the same every
 * time. Two here (before the fix the race showed in 1-3 of 6 trials locally); the slow file runs 24, in CI too.
 */
const TRIALS = 2;
const TRIAL_POOLS = 6;
const SEED = Number(process.env.SLUICE_FENCING_SEED ?? 8);

const trials = Array.from({ length: TRIALS }, (_, trial) => duplicateTrialPools(trial, TRIAL_POOLS));
const POOLS = { ...Object.fromEntries(trials.flat().map((p) => [p, 1])), fivexxa: 1, fivexxg: 1, odd: 1, deleted: 2, steady: 1 };

let stack: LocalStack;
beforeAll(async () => {
  stack = await startFaultStack(POOLS, {
    env: fencingSettings({ maxRunSeconds: MAX_RUN_SECONDS, retryMaxSeconds: 1 }),
  });
}, 60_000);
afterAll(() => stack?.stop());
afterEach(() => stack.simulator.clearFaults());

describe('the same job sent twice, 0-20 ms apart, with throttled starts, in pools of 1: never two runs at once', () => {
  test.each(trials.map((pools, trial) => [trial, pools] as const))(
    'trial %i',
    async (trial, pools) => {
      await duplicateSendsWithThrottledStarts(stack, { pools, seed: SEED * 1_000 + trial, jobs: 4 });
    },
    60_000,
  );
});

test('an AppFlow start answered 500 after the run started: the job runs once, and the pool is never over its limit', async () => {
  await startAnsweredWithServerError(stack, {
    pool: 'fivexxa',
    head: 'appflow',
    error: 'InternalServerException',
    behind: 2,
    headRunMs: 1_500,
  });
}, 40_000);

test('a Glue start answered 500 after the run started: no second run, and the pool is never over its limit', async () => {
  await startAnsweredWithServerError(stack, {
    pool: 'fivexxg',
    head: 'glue',
    error: 'InternalServiceException',
    behind: 2,
    headRunMs: 1_500,
  });
}, 40_000);

test('a Glue job with U+FFFF and U+FFFE in its arguments, waiting in a full pool: the pool does not block', async () => {
  await nonCharacterArgumentsInFullPool(stack, { pool: 'odd', odd: [{ '--note': 'before\uffffafter', '--tag': '\ufffe' }] });
}, 40_000);

test('a flow and a Glue job deleted while their runs go on, their events lost: the slots come back by the maximum run time, the jobs end failed', async () => {
  await flowAndJobDeletedWhileRunning(stack, { pool: 'deleted', behind: 2, runMs: 800, maxRunMs: MAX_RUN_SECONDS * 1_000 });
}, 40_000);

test('a Glue job refused (ConcurrentRunsExceededException) 5 times in a row (more than the old attempt limit of 3): it runs once the refusals stop', async () => {
  await steadyGlueThrottling(stack, { pool: 'steady', refusals: 5, behind: 2, timeoutMs: 25_000 });
}, 40_000);
