import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoJobLedger } from '../adapters/dynamodb/jobLedger';
import { DynamoSetRunStore } from '../adapters/dynamodb/setRunStore';
import { SqsJobQueue } from '../adapters/sqs/jobQueue';
import { silentLog } from '../app/deps';
import { JobSetRunner } from '../app/jobSets';
import { loadJobSets } from '../config/jobSetsFile';
import { systemClock } from '../ports/clock';

/** One run of a job set as a view lists it: its counts and its failed jobs. */
export interface SetRunView {
  set: string;
  run: string;
  startedAt: number;
  completedAt?: number;
  total: number;
  /** ended jobs counted on the run (a hint: the records decide) */
  ended: number;
  /** from the jobs' records: the run's summary once completed, read now while it is open */
  succeeded: number;
  failed: number;
  open: number;
  /** the first failed jobs' ids (at most MAX_LISTED_FAILED_IDS), in the set's order; `sluice sets failed` lists all */
  failedIds: string[];
}

export interface SetRunsSource {
  doc: DynamoDBDocumentClient;
  sqs: SQSClient;
  table: string;
  /** the sets file whose sets are listed (as `sluice sets list` reads it); besides, every set with an open run */
  jobSetsFile?: string;
}

/** How many open runs are looked at (one Query page of the open list). */
const OPEN_RUNS = 100;

/**
 * The latest `perSet` runs of each job set, through the readers `sluice sets runs` and `sets failed` use: the set
 * store's runs (a Query of the set's partition) and the set runner's summary of a run from its jobs' records (one
 * GetItem per job, for open runs only: a completed run carries its summary).
 */
export async function readSetRuns(source: SetRunsSource, perSet: number): Promise<SetRunView[]> {
  const store = new DynamoSetRunStore(source.doc, source.table);
  const runner = new JobSetRunner(
    {
      ledger: new DynamoJobLedger(source.doc, source.table),
      queue: new SqsJobQueue(source.sqs, '', ''),
      clock: systemClock,
      log: silentLog,
      sets: { store, events: { publish: async () => undefined } },
    },
    [],
  );
  const names = new Set<string>(setsOfFile(source.jobSetsFile));
  for (const run of (await store.openRuns({ max: OPEN_RUNS })).runs) names.add(run.set);
  const views: SetRunView[] = [];
  for (const set of [...names].sort()) {
    for (const run of await store.runs(set, perSet)) {
      const summary = run.summary ?? (await runner.summarize(run));
      views.push({
        set: run.set,
        run: run.run,
        startedAt: run.startedAt,
        ...(run.completedAt !== undefined && { completedAt: run.completedAt }),
        total: run.total,
        ended: Math.min(run.ended, run.total),
        succeeded: summary.succeeded,
        failed: summary.failed,
        open: summary.open,
        failedIds: summary.failedIds,
      });
    }
  }
  return views.sort((a, b) => b.startedAt - a.startedAt || a.set.localeCompare(b.set));
}

/** The set names of the file; none when there is no such file or it does not parse (`sluice check` says why). */
function setsOfFile(file: string | undefined): string[] {
  if (!file) return [];
  try {
    return loadJobSets(file).map((set) => set.name);
  } catch {
    return [];
  }
}
