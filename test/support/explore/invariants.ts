import { isTerminal, JobState } from '../../../shared/domain/jobState';
import { type Demand, gatesOf } from '../../../shared/domain/limits';
import { RATE_START_SLACK_MS } from '../../../shared/domain/rate';
import { RunStatus } from '../../../shared/ports/jobStarter';
import type { FakeRun } from '../fakes/fakeStarter';
import type { Observer } from './world';

/**
 * What must hold, read from the fake job APIs' own record of runs (FakeStarter.runs), never from Sluice's stores, except
 * where the end state of those stores is the point (no slot held by an ended run, no waiter stranded).
 *
 * After every scheduled step (one port call answered, one invocation begun, one run ended):
 * - at most one run per job id, ever;
 * - a new run starts only into room under every limit of its job: after it, for each of its gates (its pool and each
 *   keyed limit), the units of the runs in progress that count against the gate (each run its job's weight, from the
 *   scenario) <= the gate's limit in force (`getPool(gate).limit`) when its job was admitted, that is when the job was first seen starting with a slot (a take,
 *   a claim of a reservation, which re-checks the limit, or a resume). A start cannot be fenced by a write (the job API
 *   is not the table), so a lowering that lands between a job's admission and its start call does not stop that one
 *   start; it does stop every admission after it (docs/protocol.md, "a limit lowered"). Runs in progress never grow
 *   otherwise, so a lowered limit does not stop running jobs either.
 *
 * At the end (after faults stop, every message delivered, every run ended, the clock past every grace period and the
 * reconciler run until quiet):
 * - every job is in a terminal state. "Provably on its way" would be: a message carrying it still in SQS, a run of it in
 *   progress, or a reservation younger than the reservation grace that the reconciler will re-send. The end phase runs
 *   until none of those exists (queue empty, no run, clock past the graces, a reconcile that changed nothing), so at the
 *   end nothing is on its way and every job must have arrived: succeeded or failed with its one run's id, or dead;
 * - no slot is held (every run has ended, so a holder is a slot held by an ended run or by nothing), and every gate's
 *   counter is back to 0 units in use;
 * - no waiter is parked (nobody is running, so nobody would let it in);
 * - every dead job (it can never run: refused, or out of attempts) is in the DLQ, and no job that ran is in it.
 */

export type ViolationCategory =
  | 'second-run'
  | 'over-limit'
  | 'over-rate'
  | 'not-terminal'
  | 'ledger-run-mismatch'
  | 'slot-leak'
  | 'stranded-waiter'
  | 'dead-not-in-dlq'
  | 'dead-lettered-but-ran'
  | 'did-not-settle'
  /** the schedule passed its step or wall-clock bound (run.ts SCHEDULE_LIMITS): it loops, or waits on what never comes */
  | 'did-not-finish'
  | 'unexpected-error';

export class ExploreViolation extends Error {
  /** the readable schedule up to the violation, filled in by the runner */
  schedule = '';
  /** fast-check's own rendering of the scheduler (a schedulerFor`...` template) */
  fcReport = '';
  constructor(
    readonly category: ViolationCategory,
    readonly detail: string,
  ) {
    super(`${category}: ${detail}`);
    this.name = 'ExploreViolation';
  }
}

const inProgress = (runs: readonly FakeRun[]) => runs.filter((run) => run.status === RunStatus.InProgress);
const runName = (run: FakeRun) => `${run.executionId} of ${run.jobId}`;

export class StepInvariants {
  private readonly before = new Map<string, Set<string>>();
  private readonly limits = new Map<string, number[]>();
  /** per pool: the limit in force when each job holding a slot was first seen starting with it */
  private readonly admitted = new Map<string, Map<string, number>>();

  constructor(
    private readonly observe: Observer,
    /** pools and keyed limits (`key/<key>`) */
    private readonly pools: readonly string[],
    /** what each job takes, from the scenario */
    private readonly demands: ReadonlyMap<string, Demand>,
    private readonly ignore: ReadonlySet<ViolationCategory> = new Set(),
    /** gates with a start rate: ms between starts */
    private readonly rated: ReadonlyMap<string, number> = new Map(),
  ) {}

  /** Throws ExploreViolation when a step broke an invariant. */
  async check(): Promise<void> {
    const runs = this.observe.runs();
    const byJob = new Map<string, FakeRun[]>();
    for (const run of runs) byJob.set(run.jobId, [...(byJob.get(run.jobId) ?? []), run]);
    for (const [jobId, jobRuns] of byJob) {
      if (jobRuns.length > 1 && !this.ignore.has('second-run'))
        throw new ExploreViolation(
          'second-run',
          `job ${jobId} has ${jobRuns.length} runs: ${jobRuns.map((r) => r.executionId).join(', ')}`,
        );
    }
    for (const [gate, intervalMs] of this.rated) {
      const starts = runs
        .filter((run) => gatesOf(this.demands.get(run.jobId) ?? { pool: '', keys: [], units: 1 }).includes(gate))
        .sort((a, b) => a.startedAt - b.startedAt);
      for (let i = 1; i < starts.length; i++) {
        const gap = starts[i]!.startedAt - starts[i - 1]!.startedAt;
        // Starts follow booked times (an interval apart) within the slack: a later one books again.
        if (gap < intervalMs - RATE_START_SLACK_MS && !this.ignore.has('over-rate'))
          throw new ExploreViolation(
            'over-rate',
            `${gate} allows a start every ${intervalMs} ms: ${runName(starts[i - 1]!)} and ${runName(starts[i]!)} started ${gap} ms apart`,
          );
      }
    }
    const running = inProgress(runs);
    for (const pool of this.pools) {
      const limit = await this.observe.limit(pool);
      const history = this.limits.get(pool) ?? [];
      if (history[history.length - 1] !== limit) this.limits.set(pool, [...history, limit]);
      const holders = new Set(await this.observe.holders(pool));
      const admittedUnder = this.admitted.get(pool) ?? new Map<string, number>();
      this.admitted.set(pool, admittedUnder);
      for (const jobId of [...admittedUnder.keys()]) if (!holders.has(jobId)) admittedUnder.delete(jobId);
      for (const jobId of holders) {
        if (admittedUnder.has(jobId)) continue;
        if ((await this.observe.job(jobId))?.state === JobState.Starting) admittedUnder.set(jobId, limit);
      }
      const demandOf = (jobId: string) => this.demands.get(jobId) ?? { pool: '', keys: [], units: 1 };
      const now = running.filter((run) => gatesOf(demandOf(run.jobId)).includes(pool));
      const units = now.reduce((sum, run) => sum + demandOf(run.jobId).units, 0);
      const before = this.before.get(pool) ?? new Set<string>();
      const started = now.filter((run) => !before.has(run.executionId));
      // Every run in progress holds a slot taken under some limit, with the holders then within it: what is in
      // progress now is bounded by the highest of those (a limit raised, a job let in, the limit lowered again: the
      // jobs let in go on, and one admitted earlier may start after all that).
      const allowed = Math.max(limit, ...now.map((run) => admittedUnder.get(run.jobId) ?? limit));
      if (started.length > 0 && units > allowed && !this.ignore.has('over-limit')) {
        const others = now.filter((run) => before.has(run.executionId));
        throw new ExploreViolation(
          'over-limit',
          `pool ${pool} (limit ${limit}, limit history ${this.limits.get(pool)!.join(' -> ')}, admitted under ${allowed}): ${started.map(runName).join(', ')} started while ` +
            `${others.length} ran (${others.map(runName).join(', ') || 'none'}): ${now.length} runs in progress, ${units} units. ` +
            `Slots held in the store: [${(await this.observe.holders(pool)).join(', ')}]`,
        );
      }
      this.before.set(pool, new Set(now.map((run) => run.executionId)));
    }
  }
}

function specIdOf(body: string): string | undefined {
  try {
    const id = (JSON.parse(body) as { id?: unknown }).id;
    return typeof id === 'string' ? id : undefined;
  } catch {
    return undefined;
  }
}

/** The end-of-run checks; throws the first violation found (of a category not ignored). */
export async function checkFinal(
  observe: Observer,
  pools: readonly string[],
  jobIds: readonly string[],
  ignore: ReadonlySet<ViolationCategory> = new Set(),
): Promise<void> {
  const fail = (category: ViolationCategory, detail: string) => {
    if (!ignore.has(category)) throw new ExploreViolation(category, detail);
  };
  const runs = observe.runs();
  const stillRunning = inProgress(runs);
  if (stillRunning.length > 0) fail('did-not-settle', `runs still in progress: ${stillRunning.map(runName).join(', ')}`);
  const dlq = new Set(observe.deadLettered().map((d) => d.context.jobId ?? specIdOf(d.body)));
  for (const jobId of jobIds) {
    const record = await observe.job(jobId);
    const jobRuns = runs.filter((run) => run.jobId === jobId);
    if (!record) {
      fail('not-terminal', `job ${jobId} never reached the ledger`);
      continue;
    }
    if (!isTerminal(record.state)) {
      fail('not-terminal', `job ${jobId} is ${record.state} with nothing on its way (no message, no run, reservations past their grace)`);
      continue;
    }
    if (record.state === JobState.Dead) {
      if (!dlq.has(jobId)) fail('dead-not-in-dlq', `job ${jobId} is dead but not in the DLQ`);
    } else {
      if (jobRuns.length !== 1 || record.executionId !== jobRuns[0]!.executionId) {
        fail(
          'ledger-run-mismatch',
          `job ${jobId} ${record.state} with run ${record.executionId ?? 'none'}, the job API has ${jobRuns.map((r) => r.executionId).join(', ') || 'no run'}`,
        );
      }
      if (dlq.has(jobId)) fail('dead-lettered-but-ran', `job ${jobId} ran (${record.state}) and is in the DLQ`);
    }
  }
  for (const pool of pools) {
    const holders = await observe.holders(pool);
    if (holders.length > 0) {
      const described = await Promise.all(
        holders.map(async (jobId) => {
          const record = await observe.job(jobId);
          const jobRuns = runs.filter((run) => run.jobId === jobId).map((run) => `${run.executionId} ${run.status}`);
          return `${jobId} (${record?.state ?? 'unknown to the ledger'}; runs: ${jobRuns.join(', ') || 'none'})`;
        }),
      );
      fail('slot-leak', `pool ${pool} still holds a slot after every run ended: ${described.join('; ')}`);
    }
    const inUse = await observe.inUse(pool);
    if (inUse !== 0) fail('slot-leak', `${pool}'s counter says ${inUse} units in use after every run ended and no job holds any`);
  }
  const waiters = await observe.waiters();
  if (waiters.length > 0) {
    fail(
      'stranded-waiter',
      `waiters parked with nobody running to let them in: ${waiters.map((w) => `${w.jobId} in ${w.pool}`).join(', ')}`,
    );
  }
}
