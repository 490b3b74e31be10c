import type { EventBridgeEvent } from 'aws-lambda';
import { DynamoSetRunStore } from '../shared/adapters/dynamodb/setRunStore';
import { loadJobSets } from '../shared/config/jobSetsFile';
import type { JobSet } from '../shared/domain/jobSets';
import { fireTimes } from '../shared/domain/setSchedule';
import { SluiceDetailType, SLUICE_EVENT_SOURCE } from '../shared/ports/eventPublisher';
import { seededRandom } from './random';
import { simNameOf } from './simulators/simulatedKinds';
import { startLocalStack } from './stack';
import type { StartOptions } from './startArgs';
import type { JobSpec } from '../shared/kinds/registry';

const DAY_MS = 86_400_000;

/** A run of a set, as the day saw it. */
interface DayRun {
  set: string;
  scheduledFor: number;
  run?: string;
  jobs?: number;
  firedAt?: number;
  completed?: { succeeded: number; failed: number; total: number; at: number };
}

/**
 * `npm start -- --sets FILE`: one day (today, UTC) of the file's enabled job sets on the whole local stack, the day
 * compressed into `--day-seconds`. Each fire invokes the jobSets function as EventBridge Scheduler would (the set, the
 * scheduled time); each run's progress is printed, and its `Sluice Job Set Run Completed` event when it comes. Exit 0
 * when every run completed with each job run once and no pool above its limit.
 */
export async function runJobSetsDay(options: StartOptions): Promise<number> {
  const { file, dayMs } = options.sets!;
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const sets = loadJobSets(file).filter((set) => set.enabled);
  if (sets.length === 0) {
    log(`${file}: no enabled job set`);
    return 1;
  }
  const pools: Record<string, number> = {};
  for (const set of sets) for (const job of set.jobs) pools[job.spec.pool] = options.pools?.[job.spec.pool] ?? 8;
  const poolOfName = new Map<string, string>();
  for (const set of sets) for (const job of set.jobs) poolOfName.set(simNameOf({ ...job.spec, id: '' } as JobSpec), job.spec.pool);

  const dayStart = Math.floor(Date.now() / DAY_MS) * DAY_MS;
  const runs: DayRun[] = sets
    .flatMap((set) =>
      fireTimes(set.schedule, set.timezone, dayStart - 1, dayStart + DAY_MS - 1, { anchor: dayStart }).map((t) => ({
        set: set.name,
        scheduledFor: t,
      })),
    )
    .sort((a, b) => a.scheduledFor - b.scheduledFor);
  log(
    `${file}: ${sets.length} job sets, ${runs.length} runs today (${new Date(dayStart).toISOString().slice(0, 10)} UTC), the day in ${dayMs / 1000} s`,
  );
  for (const set of sets) log(`  ${describeSet(set, runs.filter((r) => r.set === set.name).length)}`);
  log(
    `  pools: ${Object.entries(pools)
      .map(([p, l]) => `${p} (limit ${l})`)
      .join(', ')}`,
  );

  const random = seededRandom(options.workload.seed);
  const median = options.workload.medianMs;
  const stack = await startLocalStack({
    env: { POOLS: JSON.stringify(pools), JOB_SETS_FILE: file },
    simulator: { durationMs: () => Math.round(median * (0.5 + random())), group: (_kind, name) => poolOfName.get(name) ?? 'other' },
    ...(options.workers > 0 && { functionWorkers: options.workers }),
  });
  stack.bus.addRule({
    name: 'job-set-runs-completed',
    pattern: { source: [SLUICE_EVENT_SOURCE], 'detail-type': [SluiceDetailType.SetRunCompleted] },
    target: async (event) => {
      const detail = (event as EventBridgeEvent<string, { set: string; run: string; succeeded: number; failed: number; total: number }>)
        .detail;
      const run = runs.find((r) => r.set === detail.set && r.run === detail.run);
      if (!run || run.completed) return;
      run.completed = { succeeded: detail.succeeded, failed: detail.failed, total: detail.total, at: Date.now() };
      log(
        `${clock(run.scheduledFor)} ${detail.set} run ${detail.run}: completed, ${detail.succeeded} succeeded, ${detail.failed} failed of ${detail.total} (${((run.completed.at - run.firedAt!) / 1000).toFixed(1)} s)`,
      );
    },
  });
  // Each open run's progress, every 2 s: its jobs ended of all (the count the releaser keeps on the run).
  const store = new DynamoSetRunStore(stack.doc, stack.tableName);
  const progress = setInterval(() => {
    const open = runs.filter((r) => r.run !== undefined && !r.completed);
    void Promise.all(open.map((r) => store.getRun(r.set, r.run!))).then(
      (counted) => {
        const parts = counted.flatMap((run, i) => (run ? [`${open[i]!.set} ${Math.min(run.ended, run.total)}/${run.total}`] : []));
        if (parts.length > 0) log(`  ... ${parts.join(', ')} ended`);
      },
      () => undefined,
    );
  }, 2_000);
  const realStart = Date.now();
  const deadline = realStart + dayMs + (options.timeoutMs ?? 300_000);
  try {
    for (const run of runs) {
      const due = realStart + ((run.scheduledFor - dayStart) / DAY_MS) * dayMs;
      while (Date.now() < due) await new Promise((resolve) => setTimeout(resolve, Math.min(250, due - Date.now())));
      const result = (await stack.fireJobSet(run.set, new Date(run.scheduledFor).toISOString())) as { run: string; jobs: number };
      run.run = result.run;
      run.jobs = result.jobs;
      run.firedAt = Date.now();
      log(`${clock(run.scheduledFor)} ${run.set} run ${result.run}: ${result.jobs} job${result.jobs === 1 ? '' : 's'} enqueued`);
    }
    while (runs.some((r) => !r.completed) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  } finally {
    clearInterval(progress);
    await stack.stop();
  }
  // Each job of each run once: as many runs as jobs enqueued (a job run twice would make one more).
  const enqueued = runs.reduce((n, r) => n + (r.jobs ?? 0), 0);
  const jobRuns = stack.simulator.runs().length;
  const peaks = Object.entries(pools).map(([pool, limit]) => ({ pool, limit, peak: stack.simulator.maxObservedConcurrency(pool) }));
  const done = runs.filter((r) => r.completed).length;
  log(
    `\n${done} of ${runs.length} runs completed; ${enqueued} jobs enqueued, ${jobRuns} job runs${jobRuns === enqueued ? ' (each job once)' : ''}`,
  );
  for (const { pool, limit, peak } of peaks)
    log(`  pool ${pool}: at most ${peak} at once (limit ${limit})${peak > limit ? '  OVER THE LIMIT' : ''}`);
  return done === runs.length && jobRuns === enqueued && peaks.every((p) => p.peak <= p.limit) ? 0 : 1;
}

function describeSet(set: JobSet, runs: number): string {
  return `${set.name}: ${set.jobs.length} job${set.jobs.length === 1 ? '' : 's'}, ${set.schedule} (${set.timezone}), ${runs} run${runs === 1 ? '' : 's'} today`;
}

function clock(t: number): string {
  return `[${new Date(t).toISOString().slice(11, 16)}Z]`;
}
