import type { LocalStack } from '../../../local/stack';
import { seededRandom } from '../../../local/random';
import { deadLettered, expectEveryJobRanOnce, jobRecord, runsOf } from '../../support/invariants';
import { fullReconcilerPass, sendRaw } from '../../support/probes';
import { enqueue, jobState, poolItem, queueDepth, waitForJobsDone } from '../../support/testStack';
import { waitFor } from '../../support/waitFor';
import { jobsFor, simNameOf, type Spec } from '../workload';

/**
 * The defects of an adversarial review, as scenarios on the local stack (test/faults/fencing.test.ts runs each once,
 * small; fencing.slow.test.ts runs them longer and many times). Each ends with the standard invariants
 * (test/support/invariants.ts) plus its own checks. The stack is a pool stack (runs labelled with their pool, durations
 * from their names) with the settings below on top of the `local` stage's.
 */

/** Settings of the fencing stacks: a short maximum run time (the fallback for runs the job APIs forgot), short delays. */
export function fencingSettings({ maxRunSeconds, retryMaxSeconds }: { maxRunSeconds: number; retryMaxSeconds: number }) {
  return {
    MAX_RUN_SECONDS_APPFLOW: String(maxRunSeconds),
    MAX_RUN_SECONDS_GLUE: String(maxRunSeconds),
    RETRY_MAX_SECONDS: String(retryMaxSeconds),
  };
}

const TERMINAL = ['succeeded', 'failed', 'dead'];
const bodyOf = (spec: Spec) => JSON.stringify(spec);
/** Spaces two sends of the same message (the input's timing, not a synchronisation). */
const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const nameOf = (spec: Spec) => simNameOf(spec);

// 1 ------------------------------------------------------------------------------------------------------------------

export interface DuplicateTrial {
  /** Pools of limit 1, all used at once (the load makes the race land: on one pool alone it seldom does locally). */
  pools: readonly string[];
  /** Seeds the run times and the gaps between the two copies: a trial is the same input every time. */
  seed: number;
  /** Jobs per pool. */
  jobs: number;
  timeoutMs?: number;
}

/** The pools of trial `trial`: `dup<trial>p<i>`. */
export const duplicateTrialPools = (trial: number, pools: number) => Array.from({ length: pools }, (_, i) => `dup${trial}p${i}`);

const plain = (message: string) =>
  message
    .replace(/\u001b\[[0-9;]*m/g, '')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .slice(0, 6)
    .join(' / ');

/**
 * One trial: pools of limit 1; each job's message is sent twice, 0-20 ms apart (SendMessage twice, as a producer
 * retrying a send whose answer it lost), a pool's pairs one after another; the first start of each kind is throttled
 * once per pool. A throttled start puts the job back to `queued` and passes its slot on, while the other copy may be
 * between finding the slot "already held" by its job and moving the job to `starting`. The simulator must never see
 * two runs of a pool in progress. Every pool is checked; the error names each pool that broke an invariant.
 */
export async function duplicateSendsWithThrottledStarts(
  stack: LocalStack,
  { pools, seed, jobs, timeoutMs = 30_000 }: DuplicateTrial,
): Promise<void> {
  const random = seededRandom(seed);
  const specs = pools.map((pool, p) => jobsFor(pool, jobs, () => 300 + Math.floor(random() * 4) * 50, p % 2));
  const gaps = specs.map((own) => own.map(() => Math.floor(random() * 21)));
  stack.simulator.setFaults({ throttleStarts: pools.length });
  try {
    await Promise.all(
      specs.map(async (own, p) => {
        for (const [i, spec] of own.entries()) {
          await Promise.all([sendRaw(stack, bodyOf(spec)), pause(gaps[p]![i]!).then(() => sendRaw(stack, bodyOf(spec)))]);
        }
      }),
    );
    const broken: string[] = [];
    for (const [p, pool] of pools.entries()) {
      const ids = specs[p]!.map((s) => s.id);
      await expectEveryJobRanOnce(stack, { pool, limit: 1, ids, timeoutMs }).catch(async (error: Error) => {
        const states = Object.fromEntries(await Promise.all(ids.map(async (id) => [id, await jobState(stack, id)] as const)));
        broken.push(
          `${pool} (most runs at once: ${stack.simulator.maxObservedConcurrency(pool)}): ${plain(error.message)}; ` +
            `ledger states ${JSON.stringify(states)}; pool ${JSON.stringify(await poolItem(stack, pool))}`,
        );
      });
    }
    if (broken.length)
      throw new Error(`${broken.length} of ${pools.length} pools broke an invariant (seed ${seed}):\n${broken.join('\n')}`);
  } finally {
    stack.simulator.clearFaults();
  }
}

// 2 ------------------------------------------------------------------------------------------------------------------

export interface StartAnsweredWithError {
  pool: string;
  head: 'appflow' | 'glue';
  /** InternalServerException (AppFlow's 500) or InternalServiceException (Glue's). */
  error: string;
  /** Jobs sent while the head's run goes on, in a pool of limit 1. */
  behind: number;
  headRunMs: number;
  timeoutMs?: number;
}

/**
 * The service starts the head job's run and answers the start with a 5xx all the same. The run exists: the job must
 * not get a second run (Glue has no idempotency token), and its slot must not go to the jobs behind it while that run
 * goes on (AppFlow's retry finds the run by its token, but a slot freed meanwhile lets one run too many in).
 */
export async function startAnsweredWithServerError(
  stack: LocalStack,
  { pool, head, error, behind, headRunMs, timeoutMs = 30_000 }: StartAnsweredWithError,
): Promise<void> {
  const [first] = jobsFor(pool, 2, () => headRunMs).filter((s) => s.kind === head);
  const rest = jobsFor(pool, behind, () => 200, 2);
  stack.simulator.setFaults({ [head]: { failStartsAfterStarting: { count: 1, error, namePrefix: nameOf(first!) } } });
  try {
    await enqueue(stack, [first]);
    await waitFor('the head job to have a run', () => runsOf(stack, [first!.id]).size === 1, 10_000, 5);
    await enqueue(stack, rest);

    await expectEveryJobRanOnce(stack, { pool, limit: 1, ids: [first!, ...rest].map((s) => s.id), timeoutMs });

    // The fault did fire: the head's first start made the run and answered the 5xx.
    const calls = stack.simulator.startCalls().filter((c) => c.name === nameOf(first!));
    expect(calls[0]).toEqual(
      expect.objectContaining({ ok: false, error, executionId: runsOf(stack, [first!.id]).get(first!.id)![0]!.executionId }),
    );
  } finally {
    stack.simulator.clearFaults();
  }
}

export interface ServerErrorsUnderLoad {
  pool: string;
  limit: number;
  /** Jobs of the pool, AppFlow and Glue in turn, all sent at once. */
  jobs: number;
  /** The first `failing` starts of each kind in the pool create their run and answer a 5xx. */
  failing: number;
  timeoutMs?: number;
}

/** Scenario 2 under load: several starts of each kind answered 5xx after their runs started, in a busy pool. */
export async function serverErrorsAfterStartingUnderLoad(
  stack: LocalStack,
  { pool, limit, jobs, failing, timeoutMs = 60_000 }: ServerErrorsUnderLoad,
): Promise<void> {
  // AppFlow and Glue jobs only (the two kinds the faults are set on), whatever other kinds the registry has.
  const specs = jobsFor(pool, jobs * 6, (i) => 600 + (i % 3) * 200)
    .filter((spec) => spec.kind === 'appflow' || spec.kind === 'glue')
    .slice(0, jobs);
  if (specs.length < jobs) throw new Error(`only ${specs.length} AppFlow and Glue jobs of ${jobs}`);
  const prefix = `${pool}--`;
  stack.simulator.setFaults({
    appflow: { failStartsAfterStarting: { count: failing, error: 'InternalServerException', namePrefix: prefix } },
    glue: { failStartsAfterStarting: { count: failing, error: 'InternalServiceException', namePrefix: prefix } },
  });
  try {
    await enqueue(stack, specs);

    await expectEveryJobRanOnce(stack, { pool, limit, ids: specs.map((s) => s.id), timeoutMs });

    const answered = stack.simulator.startCalls().filter((c) => c.name.startsWith(prefix) && !c.ok && c.executionId !== undefined);
    expect(answered.map((c) => c.kind).sort()).toEqual([...Array<string>(failing).fill('appflow'), ...Array<string>(failing).fill('glue')]);
  } finally {
    stack.simulator.clearFaults();
  }
}

// 3 ------------------------------------------------------------------------------------------------------------------

export interface NonCharacterJobs {
  pool: string;
  /** One odd Glue job per entry, with these arguments (e.g. { '--note': 'a\uffffb' }), each followed by a plain job. */
  odd: ReadonlyArray<Record<string, string>>;
  timeoutMs?: number;
}

/** The body as SQS takes it: U+FFFE and U+FFFF are refused raw by SQS (and fauxqs), so they go JSON-escaped. */
export const escapedBody = (spec: Spec) => bodyOf(spec).replace(/[\ufffe\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16)}`);

/**
 * Glue jobs whose arguments hold U+FFFF / U+FFFE (valid JSON and valid Glue input, but characters SQS refuses) wait
 * behind a running job in a pool of limit 1, each followed by a plain job. Whatever Sluice does with them, the pool
 * must not block: each odd job runs (with its arguments intact) or is dead-lettered with a reason, and the plain jobs
 * behind them run.
 */
export async function nonCharacterArgumentsInFullPool(
  stack: LocalStack,
  { pool, odd, timeoutMs = 20_000 }: NonCharacterJobs,
): Promise<void> {
  // The head runs until every odd job and the plain job behind it have been sent.
  const [head] = jobsFor(pool, 1, () => 600 + 600 * odd.length);
  const odds: Spec[] = odd.map((args, i) => ({
    kind: 'glue',
    pool,
    id: `${pool}-odd${i}`,
    jobName: `${pool}--odd${i}--300ms`,
    arguments: args,
  }));
  const plainJobs = jobsFor(pool, odd.length, () => 200, 1);
  const plainIds = [head!, ...plainJobs].map((s) => s.id);
  const oddIds = odds.map((s) => s.id);
  const all = [...plainIds, ...oddIds];

  await enqueue(stack, [head]);
  await waitFor('the head job to run', () => runsOf(stack, [head!.id]).size === 1, 10_000, 5);
  for (const [i, spec] of odds.entries()) {
    await sendRaw(stack, escapedBody(spec));
    // Each message is consumed (parked, dead-lettered, whatever) before the next is sent: the order is the input's.
    await waitFor(`${spec.id}'s message to be consumed`, async () => (await queueDepth(stack, stack.queueUrl)) === 0, 10_000, 10);
    await enqueue(stack, [plainJobs[i]]);
    await waitFor(`${plainJobs[i]!.id}'s message to be consumed`, async () => (await queueDepth(stack, stack.queueUrl)) === 0, 10_000, 10);
  }

  // Every job at an end (an odd one may also be dead-lettered without a ledger record); the DLQ is drained into `dlq`.
  const dlq: Array<{ jobId: string; reason: string }> = [];
  const states: Record<string, string | undefined> = {};
  await waitFor(
    'the odd jobs to run or be dead-lettered, and the jobs behind them to finish',
    async () => {
      dlq.push(...(await deadLettered(stack, all)));
      for (const id of all) states[id] = await jobState(stack, id);
      const oddDone = oddIds.every((id) => TERMINAL.includes(states[id] ?? '') || dlq.some((d) => d.jobId === id));
      return oddDone && plainIds.every((id) => TERMINAL.includes(states[id] ?? ''));
    },
    timeoutMs,
    50,
  ).catch(async (error: Error) => {
    throw new Error(`${error.message}; ledger states ${JSON.stringify(states)}; pool ${JSON.stringify(await poolItem(stack, pool))}`);
  });

  expect(dlq.filter((d) => !oddIds.includes(d.jobId))).toEqual([]);
  const ran: string[] = [];
  for (const spec of odds) {
    const runs = runsOf(stack, [spec.id]).get(spec.id) ?? [];
    if (states[spec.id] === 'succeeded') {
      // It ran once, with the arguments it was sent (not with replacement characters).
      expect(runs).toHaveLength(1);
      expect(runs[0]!.args).toEqual({ ...(spec.kind === 'glue' ? spec.arguments : {}), '--sluice-job-id': spec.id });
      ran.push(spec.id);
    } else {
      // Dead-lettered, once, with a reason of Sluice's (not SQS's redrive), never run.
      const mine = dlq.filter((d) => d.jobId === spec.id);
      expect({ job: spec.id, state: states[spec.id] ?? '(not in the ledger)', runs: runs.length, deadLettered: mine.length }).toEqual({
        job: spec.id,
        state: states[spec.id] === undefined ? '(not in the ledger)' : 'dead',
        runs: 0,
        deadLettered: 1,
      });
      expect(mine[0]!.reason).not.toMatch(/redriven by SQS/);
    }
  }
  // The standard invariants over the plain jobs and the odd ones that ran (a dead-lettered one holds no slot either).
  await expectEveryJobRanOnce(stack, { pool, limit: 1, ids: [...plainIds, ...ran], timeoutMs });
}

// 4 ------------------------------------------------------------------------------------------------------------------

export interface DeletedWhileRunning {
  pool: string;
  /** One job of each kind runs (the pool's limit is 2) and has its flow / job deleted; `behind` jobs wait. */
  behind: number;
  runMs: number;
  maxRunMs: number;
}

/**
 * A flow and a Glue job are deleted while a run of each goes on, and the runs' completion events are lost: the status
 * APIs answer ResourceNotFoundException / EntityNotFoundException for them from then on. Sluice cannot learn how the
 * runs ended; it must give their slots back by the maximum run time (the first full reconciler pass after it) and end
 * the jobs failed.
 */
export async function flowAndJobDeletedWhileRunning(
  stack: LocalStack,
  { pool, behind, runMs, maxRunMs }: DeletedWhileRunning,
): Promise<void> {
  const deleted = jobsFor(pool, 2, () => runMs);
  const rest = jobsFor(pool, behind, () => 200, 2);
  const deletedIds = deleted.map((s) => s.id);
  // Their runs are the next of their kinds to end (the others wait): their end events are lost.
  stack.simulator.setFaults(Object.fromEntries(deleted.map((spec) => [spec.kind, { dropEvents: 1 }])));
  try {
    await enqueue(stack, deleted);
    const records = await waitFor(
      'both runs to be recorded',
      async () => {
        const rs = await Promise.all(deletedIds.map((id) => jobRecord(stack, id)));
        return rs.every((r) => r?.state === 'running' && r.startedAt !== undefined) ? rs : undefined;
      },
      10_000,
      10,
    );
    for (const spec of deleted) stack.simulator.deleteName(spec.kind, simNameOf(spec));
    await enqueue(stack, rest);

    // Sluice may give the slots back once the maximum run time has passed since the later run was recorded; the first
    // full reconciler pass after that must (on AWS: within one reconcile period). Waited for as a pass, not a time.
    const overdueAfter = Math.max(...records.map((r) => r!.startedAt!)) + maxRunMs + 1;
    await fullReconcilerPass(stack, overdueAfter, maxRunMs + 60_000);
    const afterPass = await Promise.all(deletedIds.map((id) => jobRecord(stack, id)));
    expect(afterPass.map((r) => [r?.jobId, r?.state])).toEqual(deletedIds.map((id) => [id, 'failed']));

    const ids = [...deletedIds, ...rest.map((s) => s.id)];
    await waitForJobsDone(stack, ids, 60_000).catch(async (error: Error) => {
      const states = Object.fromEntries(await Promise.all(ids.map(async (id) => [id, await jobState(stack, id)] as const)));
      throw new Error(`${error.message}; ledger states ${JSON.stringify(states)}; pool ${JSON.stringify(await poolItem(stack, pool))}`);
    });
    await expectEveryJobRanOnce(stack, { pool, limit: 2, ids, failed: deletedIds, idleAfter: overdueAfter });

    // The events were lost: the jobs behind got the slots by the maximum run time fallback (the pass above).
    expect(
      stack.simulator
        .droppedEvents()
        .map((e) => e.executionId)
        .sort(),
    ).toEqual(deletedIds.map((id) => runsOf(stack, [id]).get(id)![0]!.executionId).sort());
  } finally {
    stack.simulator.clearFaults();
  }
}

// 5 ------------------------------------------------------------------------------------------------------------------

export interface SteadyThrottling {
  pool: string;
  /** Starts of the Glue job refused in a row with ConcurrentRunsExceededException (more than the old attempt limit). */
  refusals: number;
  behind: number;
  timeoutMs: number;
}

/**
 * A Glue job whose starts are refused with ConcurrentRunsExceededException (its MaxConcurrentRuns is taken) for longer
 * than the attempts Sluice allows: it must run once the refusals stop, not be dead-lettered; the jobs behind it run.
 */
export async function steadyGlueThrottling(stack: LocalStack, { pool, refusals, behind, timeoutMs }: SteadyThrottling): Promise<void> {
  const [refused] = jobsFor(pool, 2, () => 300).filter((s) => s.kind === 'glue');
  const rest = jobsFor(pool, behind, () => 200, 2);
  stack.simulator.setFaults({
    glue: { failStarts: { count: refusals, error: 'ConcurrentRunsExceededException', namePrefix: nameOf(refused!) } },
  });
  try {
    await enqueue(stack, [refused, ...rest]);

    await expectEveryJobRanOnce(stack, { pool, limit: 1, ids: [refused!, ...rest].map((s) => s.id), timeoutMs });

    const calls = stack.simulator.startCalls().filter((c) => c.name === nameOf(refused!));
    expect(calls.map((c) => c.error ?? 'ok')).toEqual([...Array<string>(refusals).fill('ConcurrentRunsExceededException'), 'ok']);
  } finally {
    stack.simulator.clearFaults();
  }
}
