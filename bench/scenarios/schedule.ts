import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { toJobItem } from '../../shared/adapters/dynamodb/jobItem';
import type { ReconcileReport } from '../../shared/app/reconcile';
import type { LoadReport } from '../../shared/app/loadScheduled';
import { JobState } from '../../shared/domain/jobState';
import { dueBucket, dueSortKey } from '../../shared/domain/notBefore';
import { registeredRecord } from '../../shared/ports/jobLedger';
import { benchScope } from '../tracer';
import { type Harness, waitUntil } from '../harness';
import { type Distribution, distribution } from '../metrics';
import { type BenchJob, makeJobs } from '../workload';
import type { JobSpec } from '../../shared/kinds/registry';

/**
 * Jobs that start at a time (issue 11), on the local stack with a free pool (its limit above the jobs in flight):
 * - **held**: `openJobs` scheduled jobs due a day or more ahead, on the due index, while everything below runs: how
 *   long one reconciler run (the loader first) takes with them there, and whether the rest is slowed;
 * - **spread**: `spreadJobs` jobs with notBefore spread evenly over `spreadMs`, sent `leadMs` before the first is due:
 *   lateness = the simulator's start call minus notBefore, p50 and max;
 * - **hotspot**: `hotspotJobs` jobs due in the same second: all started (the pool's limit is above them), p99 lateness.
 * Jobs within 15 minutes ride an SQS delay (whole seconds) and the acquirer waits the sub-second rest; the due index
 * path adds the loader, which sends a job 13-15 minutes early with the same delay, so its lateness is the same.
 */
export interface ScheduleParams {
  pool: string;
  spreadJobs: number;
  spreadMs: number;
  /** time from sending the first job to its notBefore: the jobs must be registered by then */
  leadMs: number;
  openJobs: number;
  hotspotJobs: number;
  hotspotLeadMs: number;
  runMs: number;
  timeoutMs: number;
}

export interface ScheduleResult {
  p50LatenessMs: number;
  maxLatenessMs: number;
  n: number;
  openJobs: number;
  /** null when hotspotJobs is 0 (the hotspot scenario measures it) */
  hotspot: { jobs: number; p99LatenessMs: number } | null;
  detail: {
    spread: Distribution & { jobs: number; overMs: number; registeredInMs: number; startedLate1s: number; startedEarly: number };
    hotspot:
      | (Distribution & { jobs: number; registeredInMs: number; started: number; lastStartAfterMs: number; startedEarly: number; startedLate1s: number })
      | null;
    held: { jobs: number; writeMs: number; reconcilerRunMs: number; firstReconcilerRunMs: number; loader: LoadReport | null };
    pollers: number;
  };
}

export async function runSchedule(h: Harness, p: ScheduleParams & { pollers: number }): Promise<ScheduleResult> {
  const held = await holdOpenJobs(h, p.openJobs);
  // Reconciler runs with them held: the loader reads only the minutes from its cursor to 15 minutes ahead. The first
  // run ever has no cursor and reads the last 30 minutes too (368 bucket queries); the second is a steady one.
  const reconcile = async () => {
    const before = Date.now();
    const report = (await benchScope.run('reconciler', () => h.stack.reconcileNow())) as ReconcileReport & { loader?: LoadReport };
    return { report, ms: Date.now() - before };
  };
  const first = await reconcile();
  const { report, ms: reconcilerRunMs } = await reconcile();
  h.log(
    `schedule: ${held.jobs} open jobs held (written in ${held.writeMs} ms); a reconciler run with them: ${reconcilerRunMs} ms (the first, with no loader cursor: ${first.ms} ms)`,
  );

  const spread = await timed(h, {
    group: 'bench-sched',
    pool: p.pool,
    jobs: p.spreadJobs,
    dueAt: (t0, i) => t0 + leadFor(p.spreadJobs, p.leadMs) + Math.floor((i * p.spreadMs) / p.spreadJobs),
    runMs: p.runMs,
    timeoutMs: p.timeoutMs,
  });
  h.log(
    `  spread: ${spread.n} jobs over ${p.spreadMs / 1000} s: lateness p50 ${spread.p50Ms} ms, p99 ${spread.p99Ms} ms, max ${spread.maxMs} ms (registered in ${spread.registeredInMs} ms)`,
  );
  // The hotspot scenario (./hotspot.ts) measures a second of many due jobs on a limited and an unlimited pool; this
  // one only when asked (hotspotJobs > 0).
  if (p.hotspotJobs <= 0)
    return {
      p50LatenessMs: spread.p50Ms,
      maxLatenessMs: spread.maxMs,
      n: spread.n,
      openJobs: held.jobs,
      hotspot: null,
      detail: {
        spread: { ...spread, jobs: p.spreadJobs, overMs: p.spreadMs },
        hotspot: null,
        held: { ...held, reconcilerRunMs, firstReconcilerRunMs: first.ms, loader: report?.loader ?? null },
        pollers: p.pollers,
      },
    };
  const hot = await timed(h, {
    group: 'bench-hot',
    pool: p.pool,
    jobs: p.hotspotJobs,
    dueAt: (t0) => Math.ceil((t0 + leadFor(p.hotspotJobs, p.hotspotLeadMs)) / 1000) * 1000,
    runMs: p.runMs,
    timeoutMs: p.timeoutMs,
  });
  h.log(
    `  hotspot: ${hot.n} jobs due in one second: lateness p50 ${hot.p50Ms} ms, p99 ${hot.p99Ms} ms, max ${hot.maxMs} ms (registered in ${hot.registeredInMs} ms)`,
  );
  return {
    p50LatenessMs: spread.p50Ms,
    maxLatenessMs: spread.maxMs,
    n: spread.n,
    openJobs: held.jobs,
    hotspot: { jobs: hot.n, p99LatenessMs: hot.p99Ms },
    detail: {
      spread: { ...spread, jobs: p.spreadJobs, overMs: p.spreadMs },
      hotspot: { ...hot, jobs: p.hotspotJobs, started: hot.n, lastStartAfterMs: hot.maxMs },
      held: { ...held, reconcilerRunMs, firstReconcilerRunMs: first.ms, loader: report?.loader ?? null },
      pollers: p.pollers,
    },
  };
}

/**
 * `count` scheduled jobs due a day ahead and more (one a second), written as the acquirer's `schedule` step writes them
 * (the job record, scheduled, with its due index keys), by the bench's own client in batches of 25: registering them
 * through the queue would take minutes here and measures nothing new (the spread run below does that path).
 */
async function holdOpenJobs(h: Harness, count: number): Promise<{ jobs: number; writeMs: number }> {
  const started = Date.now();
  const now = started;
  const items = (i: number) => {
    const dueAt = now + 86_400_000 + i * 1000;
    const id = `bench-open-${String(i).padStart(6, '0')}`;
    const spec: JobSpec = { kind: 'appflow', pool: 'bench-open', id, flowName: `bench-open--f-${i}`, notBefore: new Date(dueAt).toISOString() };
    const record = { ...registeredRecord(spec, now), state: JobState.Scheduled };
    return { ...toJobItem(record), dueBucket: dueBucket(dueAt, id), dueSk: dueSortKey(dueAt, id) };
  };
  const batches: number[][] = [];
  for (let i = 0; i < count; i += 25) batches.push(Array.from({ length: Math.min(25, count - i) }, (_, j) => i + j));
  let next = 0;
  const lanes = Array.from({ length: 8 }, async () => {
    while (next < batches.length) {
      let requests = batches[next++]!.map((i) => ({ PutRequest: { Item: items(i) } }));
      while (requests.length > 0) {
        const out = await h.own.doc.send(new BatchWriteCommand({ RequestItems: { [h.stack.tableName]: requests } }));
        requests = (out.UnprocessedItems?.[h.stack.tableName] ?? []) as typeof requests;
      }
    }
  });
  await Promise.all(lanes);
  return { jobs: count, writeMs: Date.now() - started };
}

/** The lead a run of `jobs` needs here: every job registered (about 200 a second on 2 cores) before the first is due. */
export const leadFor = (jobs: number, leadMs: number): number => Math.max(leadMs, jobs * 6);

/** Sends `jobs` jobs with notBefore `dueAt(t0, i)`, waits until every one started, and measures their lateness. */
export async function timed(
  h: Harness,
  o: { group: string; pool: string; jobs: number; dueAt: (t0: number, i: number) => number; runMs: number; timeoutMs: number },
): Promise<Distribution & { registeredInMs: number; startedLate1s: number; startedEarly: number }> {
  const t0 = Date.now();
  const jobs: BenchJob[] = makeJobs({ group: o.group, pool: o.pool, durations: Array(o.jobs).fill(o.runMs), tag: 't' }).map(
    (job, i) => ({ ...job, spec: { ...job.spec, notBefore: new Date(o.dueAt(t0, i)).toISOString() } }),
  );
  const dueByName = new Map(jobs.map((job) => [job.name, Date.parse(job.spec.notBefore!)]));
  const ids = jobs.map((job) => job.spec.id);
  await h.enqueue(jobs);
  await waitUntil(`${o.group}: every job received`, () => ids.every((id) => h.tracer.receives.has(id)), o.timeoutMs, 100);
  const registeredInMs = Math.max(...ids.map((id) => h.tracer.receives.get(id)![0]!)) - t0;
  const last = Math.max(...dueByName.values());
  await waitUntil(`${o.group}: every job started`, () => Date.now() > last && h.runsOf(o.group).length >= o.jobs, o.timeoutMs + (last - t0), 100);
  const lateness = h.runsOf(o.group).map((run) => run.startCallAt - dueByName.get(run.name)!);
  return {
    ...distribution(lateness),
    registeredInMs,
    startedLate1s: lateness.filter((ms) => ms > 1000).length,
    startedEarly: lateness.filter((ms) => ms < 0).length,
  };
}
