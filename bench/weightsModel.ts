import { BACKFILL_LOOKAHEAD, BACKFILL_MARGIN_MS } from '../shared/app/backfill';
import { endByOf, fittingPrefix, type Holding, planBackfill } from '../shared/domain/backfill';
import type { RunSpan } from './metrics';

/**
 * The weights scenario's jobs run through Sluice's own admission rule, with no AWS call and no process in between:
 * strict order (the waiters from the head on that fit the free units) and, when the head does not fit, backfill's
 * picks among the head and the waiters a release looks at behind it (shared/domain/backfill.ts, the very function the
 * releaser calls, with its look-ahead and margin). The one delay modelled is `gapMs`: the units a run gives back are
 * free, and the next admission is decided, that long after its end (a completion event, a hand-over, a start call). At
 * a gap of 0 this is what the rule alone leaves idle; at the gap measured on the stack, what the rule and that gap leave
 * idle together. Jobs wait in the order given (the order the scenario sends them). Not modelled: a releaser that has
 * lost a hand-off race lately may let in a waiter a few places behind the head (shared/domain/handOffPick.ts).
 */

export interface ModelJob {
  units: number;
  runMs: number;
  /** declared run limit (runSeconds), ms; undefined: none (the job never backfills) */
  runLimitMs?: number;
}

export interface ModelRun extends RunSpan {
  job: number;
  endedAt: number;
}

interface Running {
  job: number;
  since: number;
  /** when its units are free again: its run's end plus the gap */
  backAt: number;
}

/** Every job's run, in start order, under the rule, each run's units free again `gapMs` after its end. */
export function modelRuns(jobs: readonly ModelJob[], budget: number, gapMs: number): ModelRun[] {
  const waiting = jobs.map((_, i) => i);
  const running: Running[] = [];
  const runs: ModelRun[] = [];
  let seq = 0;
  const start = (job: number, now: number) => {
    running.push({ job, since: now, backAt: now + jobs[job]!.runMs + gapMs });
    runs.push({ job, startedAt: now, endedAt: now + jobs[job]!.runMs, startSeq: seq++ });
  };
  const admit = (now: number) => {
    for (;;) {
      const free = budget - running.reduce((sum, run) => sum + jobs[run.job]!.units, 0);
      const fitting = fittingPrefix(
        waiting.map((job) => jobs[job]!.units),
        free,
      );
      if (fitting > 0) {
        for (const job of waiting.splice(0, fitting)) start(job, now);
        continue;
      }
      const holdings: Holding[] = running.map((run) => {
        const endBy = endByOf(run.since, jobs[run.job]!.runLimitMs);
        return { units: jobs[run.job]!.units, ...(endBy !== undefined && { endBy }) };
      });
      const lookedAt = waiting.slice(0, BACKFILL_LOOKAHEAD);
      const candidates = lookedAt.map((job) => {
        const limit = jobs[job]!.runLimitMs;
        return { units: jobs[job]!.units, ...(limit !== undefined && { runMs: limit }) };
      });
      const { picks } = planBackfill({ free, holdings, waiting: candidates, now, marginMs: BACKFILL_MARGIN_MS });
      if (picks.length === 0) return;
      for (const job of picks.map((i) => lookedAt[i]!)) {
        waiting.splice(waiting.indexOf(job), 1);
        start(job, now);
      }
    }
  };
  admit(0);
  while (running.length > 0) {
    const now = Math.min(...running.map((run) => run.backAt));
    for (const run of running.filter((r) => r.backAt === now)) {
      running.splice(running.indexOf(run), 1);
      runs.find((r) => r.job === run.job)!.endSeq = seq++;
    }
    admit(now);
  }
  if (waiting.length > 0) throw new Error(`${waiting.length} jobs can never start: one needs more units than the budget of ${budget}`);
  return runs;
}
