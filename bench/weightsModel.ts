import { fittingPrefix, type Holding, planBackfill } from '../shared/domain/backfill';
import type { RunSpan } from './metrics';

/**
 * The weights scenario's jobs run through Sluice's own admission rule, with no AWS call and no process in between:
 * strict order (the waiters from the head on that fit the free units) and, when the head does not fit, backfill's
 * picks (shared/domain/backfill.ts, the very function the releaser calls). The one delay modelled is `gapMs`: the units
 * a run gives back are let in again that long after its end (completion event, hand-over, start call). At a gap of 0
 * this is what the rule alone leaves idle; at the gap measured on the stack, what the rule and that gap leave idle
 * together. Jobs wait in the order given (the scenario's enqueue order).
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
  endsAt: number;
}

/** Every job's run, in start order, under the rule with units coming back `gapMs` after each run's end. */
export function modelRuns(jobs: readonly ModelJob[], budget: number, gapMs: number): ModelRun[] {
  const waiting = jobs.map((_, i) => i);
  const running: Running[] = [];
  const admissions: number[] = [0];
  const runs: ModelRun[] = [];
  let seq = 0;
  const start = (job: number, now: number) => {
    running.push({ job, since: now, endsAt: now + jobs[job]!.runMs });
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
        const limit = jobs[run.job]!.runLimitMs;
        return { units: jobs[run.job]!.units, ...(limit !== undefined && { endBy: run.since + limit }) };
      });
      const candidates = waiting.map((job) => {
        const limit = jobs[job]!.runLimitMs;
        return { units: jobs[job]!.units, ...(limit !== undefined && { runMs: limit }) };
      });
      const { picks } = planBackfill({ free, holdings, waiting: candidates, now, marginMs: 0 });
      if (picks.length === 0) return;
      const picked = picks.map((i) => waiting[i]!);
      for (const job of picked) {
        waiting.splice(waiting.indexOf(job), 1);
        start(job, now);
      }
    }
  };
  while (waiting.length > 0 || running.length > 0) {
    const nextEnd = Math.min(...running.map((run) => run.endsAt));
    const nextAdmission = Math.min(...admissions);
    if (!Number.isFinite(nextEnd) && !Number.isFinite(nextAdmission))
      throw new Error(`${waiting.length} jobs can never start: one needs more units than the budget of ${budget}`);
    if (nextEnd <= nextAdmission) {
      // Ends before admissions at the same moment: units given back at t are there for a decision at t.
      const ended = running.filter((run) => run.endsAt === nextEnd);
      for (const run of ended) running.splice(running.indexOf(run), 1);
      for (const run of ended) runs.find((r) => r.job === run.job)!.endSeq = seq++;
      admissions.push(nextEnd + gapMs);
    } else {
      admissions.splice(admissions.indexOf(nextAdmission), 1);
      admit(nextAdmission);
    }
  }
  return runs;
}
