import { GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { type DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoJobLedger } from '../adapters/dynamodb/jobLedger';
import { DynamoLeaseStore } from '../adapters/dynamodb/leaseStore';
import { DAY_MS, DEAD_LETTER_DAYS, daysCovering, EndedClass, endedBuckets, endedFromBound } from '../domain/endedIndex';
import { JobState } from '../domain/jobState';
import { inParallel } from '../app/inParallel';
import type { JobRecord } from '../ports/jobLedger';
import { type PoolDetail, poolDetails } from './pools';
import { consoleUrlOf } from './consoleUrl';
import { HISTORY_WINDOW_MS, inWindow, type RunTimes } from './runHistory';
import { readJobAttribute, readJobFields } from './jobs';
import { targetNameOf } from './targetName';

/** A job as a view lists it: what its row shows, with the name of what it starts instead of its spec. */
export type JobSummary = Pick<
  JobRecord,
  'jobId' | 'pool' | 'kind' | 'state' | 'attempts' | 'updatedAt' | 'executionId' | 'lastError' | 'deadLetteredAt' | 'startedAt' | 'endedAt'
> & { target?: string; /** its run in the AWS console (its kind's consoleUrl) */ consoleUrl?: string };

/** A job's row: the fields the `ended` index projects (serverless.yml), and those read by key of the others. */
export const SUMMARY_FIELDS = [
  'jobId',
  'pool',
  'kind',
  'state',
  'attempts',
  'updatedAt',
  'executionId',
  'lastError',
  'deadLetteredAt',
  'startedAt',
  'endedAt',
] as const;

export interface JobsView {
  /**
   * The latest changed jobs, the latest first: the `recent` latest of all, and the `recent` latest of each state (so a
   * view filtered by state has its own latest, not those of the few that were among the latest of all)
   */
  recent: JobSummary[];
  /** the jobs dead-lettered (state dead, their DLQ copy sent), the latest first: what the DLQ holds, read from the table */
  deadLettered: JobSummary[];
  /** the times of the jobs that ran (or ended) in the last day: what runHistory is made of */
  runTimes: RunTimes[];
  /** a Query of the ended index stopped at its page limit: the lists and the history are of the part it read */
  truncated: boolean;
}

export interface JobsViewOptions {
  recent: number;
  deadLettered: number;
  /** the history's end (epoch ms): the jobs that ran or ended in the day before it are kept */
  now: number;
  /** the AWS region the runs are in, for their console links (none without it) */
  region?: string;
  /** the most pages read of each bucket of the ended index (each up to ENDED_PAGE_ITEMS entries, and 1 MB) */
  maxPages?: number;
}

/** The sparse index of ended jobs (serverless.yml: SluiceTable, GlobalSecondaryIndexes; shared/domain/endedIndex.ts). */
export const ENDED_INDEX = 'ended';
/** Entries a page of the ended index (a few hundred bytes each: about 0.5 read unit per 10 of them). */
export const ENDED_PAGE_ITEMS = 1000;
/**
 * Pages read of one bucket (a day's shard) at most: 16 shards of 5 pages are up to 80,000 jobs ended in a day. Past it,
 * the view is of the latest of each shard, and says so (`truncated`).
 */
export const MAX_ENDED_PAGES = 5;
/** Queries in flight at once. */
const PARALLEL_QUERIES = 8;

/**
 * The latest changed jobs, the dead-lettered ones and the last day's run times, with no Scan:
 * - the jobs holding a slot (reserved, starting, running; dead keeping one): every pool's holders, from the `holders`
 *   index; the next waiting jobs of each pool, from its waiting list (pools.ts); their records read by key;
 * - the jobs that ended (succeeded, failed, cancelled) since the window's start: Queries of the `ended` index, one per
 *   shard of each UTC day the window covers, newest first, at most `maxPages` pages each; the dead jobs of the last
 *   DEAD_LETTER_DAYS days the same way (their buckets are apart, so the days of succeeded jobs are not read for them).
 * Jobs queued or scheduled (neither holding a slot nor ended) are not listed: `sluice jobs --state` lists them.
 * An index is eventually consistent (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html#GSI.Reads):
 * a job that ended a moment ago may be missing, or listed in the state it had at its previous end (a kept slot given
 * back), until the index catches up; a view, read again every JOBS_EVERY_MS, can live with that. A job found by two
 * reads is listed once, with its latest change. Jobs that ended before the index existed are not on it (their records
 * age out with the retention). The specs of the jobs kept, for their target names, are read after, by key.
 */
export async function readJobsView(doc: DynamoDBDocumentClient, table: string, options: JobsViewOptions): Promise<JobsView> {
  const maxPages = options.maxPages ?? MAX_ENDED_PAGES;
  const from = options.now - HISTORY_WINDOW_MS;
  const endedOnes = endedBuckets(daysCovering(from, options.now), EndedClass.Ended);
  const deadBuckets = endedBuckets(daysCovering(options.now - DEAD_LETTER_DAYS * DAY_MS, options.now), EndedClass.Dead);
  const [live, ended] = await Promise.all([
    liveJobs(doc, table, options.recent),
    inParallel(
      [...endedOnes.map((bucket) => ({ bucket, from })), ...deadBuckets.map((bucket) => ({ bucket, from: 0 }))],
      PARALLEL_QUERIES,
      ({ bucket, from: since }) => queryBucket(doc, table, bucket, since, maxPages),
    ),
  ]);
  const truncated = ended.some((read) => read.truncated);
  // A job in two reads (the index lags the table, or a dead job still holds a slot): its latest change wins.
  const byId = new Map<string, JobSummary>();
  for (const job of [...live, ...ended.flatMap((read) => read.jobs)]) {
    const seen = byId.get(job.jobId);
    if (!seen || job.updatedAt > seen.updatedAt) byId.set(job.jobId, job);
  }
  const jobs = [...byId.values()];
  const byState = new Map<string, JobSummary[]>();
  for (const job of jobs) {
    const of = byState.get(job.state) ?? [];
    of.push(job);
    byState.set(job.state, of);
  }
  const listed = latest(
    [
      ...new Map(
        [
          ...latest([...jobs], (job) => job.updatedAt, options.recent),
          ...[...byState.values()].flatMap((of) => latest(of, (j) => j.updatedAt, options.recent)),
        ].map((job) => [job.jobId, job]),
      ).values(),
    ],
    (job) => job.updatedAt,
    Infinity,
  );
  const deadLettered = latest(
    jobs.filter((job) => job.state === JobState.Dead && job.deadLetteredAt !== undefined),
    (job) => job.deadLetteredAt!,
    options.deadLettered,
  );
  const runTimes = jobs.filter((job) => inWindow(job, options.now)).map(runTimesOf);
  const specs = await specsOf(
    doc,
    table,
    [...listed, ...deadLettered].map((job) => job.jobId),
  );
  const named = (job: JobSummary): JobSummary => {
    const spec = specs.get(job.jobId);
    const target = targetNameOf(job.kind, spec);
    const link = options.region && job.executionId ? consoleUrlOf(job.kind, spec, job.executionId, options.region) : undefined;
    return { ...job, ...(target !== undefined && { target }), ...(link !== undefined && { consoleUrl: link }) };
  };
  return { recent: listed.map(named), deadLettered: deadLettered.map(named), runTimes, truncated };
}

/**
 * The ids of the `recent` latest changed jobs, for `sluice top` (which redraws every few seconds): the holders and next
 * waiters as readJobsView reads them, and the newest `recent` entries of each bucket of the ended index (ended and
 * dead) of today, and of yesterday only when today has fewer: 32 or 64 Queries of at most `recent` entries, no Scan.
 * The index lags its records a moment (readJobsView).
 */
export async function readRecentJobIds(
  doc: DynamoDBDocumentClient,
  table: string,
  options: { recent: number; now: number; pools?: Promise<PoolDetail[]> },
): Promise<string[]> {
  const bucketsOf = (day: string) => [...endedBuckets([day], EndedClass.Ended), ...endedBuckets([day], EndedClass.Dead)];
  const newest = async (day: string) =>
    (await inParallel(bucketsOf(day), PARALLEL_QUERIES, (bucket) => queryBucket(doc, table, bucket, 0, 1, options.recent))).flatMap(
      (read) => read.jobs,
    );
  const [today, yesterday] = daysCovering(options.now - DAY_MS, options.now);
  const [live, ended] = await Promise.all([liveJobs(doc, table, options.recent, options.pools), newest(today!)]);
  if (ended.length < options.recent) ended.push(...(await newest(yesterday!)));
  const byId = new Map<string, JobSummary>();
  for (const job of [...live, ...ended]) {
    const seen = byId.get(job.jobId);
    if (!seen || job.updatedAt > seen.updatedAt) byId.set(job.jobId, job);
  }
  return latest([...byId.values()], (job) => job.updatedAt, options.recent).map((job) => job.jobId);
}

/**
 * The jobs holding a slot and the next `waiters` waiting in each pool, as their records say now (read by key). `read`:
 * the pools as the caller reads them anyway (with at least `waiters` waiters each), not read again.
 */
async function liveJobs(doc: DynamoDBDocumentClient, table: string, waiters: number, read?: Promise<PoolDetail[]>): Promise<JobSummary[]> {
  const pools = await (read ?? poolDetails({ leases: new DynamoLeaseStore(doc, table) }, { waiters }));
  const ids = pools.flatMap((pool) => [
    ...pool.held.map((holder) => holder.jobId),
    ...pool.next.slice(0, waiters).map((waiter) => waiter.jobId),
  ]);
  const { items } = await readJobFields(doc, table, ids, SUMMARY_FIELDS);
  return [...items.values()] as JobSummary[];
}

/** One bucket of the ended index, newest first, down to `from` (epoch ms), at most `maxPages` pages. */
async function queryBucket(
  doc: DynamoDBDocumentClient,
  table: string,
  bucket: string,
  from: number,
  maxPages: number,
  pageItems: number = ENDED_PAGE_ITEMS,
): Promise<{ jobs: JobSummary[]; truncated: boolean }> {
  const jobs: JobSummary[] = [];
  let start: Record<string, unknown> | undefined;
  let pages = 0;
  do {
    const page = await doc.send(
      new QueryCommand({
        TableName: table,
        IndexName: ENDED_INDEX,
        KeyConditionExpression: 'endedBucket = :bucket AND endedSk >= :from',
        ExpressionAttributeValues: { ':bucket': bucket, ':from': endedFromBound(from) },
        ScanIndexForward: false,
        Limit: pageItems,
        ExclusiveStartKey: start,
      }),
    );
    pages++;
    for (const item of page.Items ?? []) {
      const { pk: _pk, sk: _sk, endedBucket: _bucket, endedSk: _endedSk, ...summary } = item;
      jobs.push(summary as JobSummary);
    }
    start = page.LastEvaluatedKey;
  } while (start && pages < maxPages);
  return { jobs, truncated: start !== undefined };
}

function runTimesOf(job: JobSummary): RunTimes {
  return {
    pool: job.pool,
    state: job.state,
    updatedAt: job.updatedAt,
    ...(job.startedAt !== undefined && { startedAt: job.startedAt }),
    ...(job.endedAt !== undefined && { endedAt: job.endedAt }),
    ...(job.deadLetteredAt !== undefined && { deadLetteredAt: job.deadLetteredAt }),
  };
}

/** The specs of these jobs (a record gone since it was listed: none; one still unread after throttling: listed without its target's name). */
async function specsOf(doc: DynamoDBDocumentClient, table: string, ids: readonly string[]): Promise<Map<string, unknown>> {
  const { values } = await readJobAttribute(doc, table, ids, 'spec');
  return new Map([...values].map(([id, spec]) => [id, parseSpec(spec)]));
}

/** A job item keeps its spec as JSON text (shared/adapters/dynamodb/jobItem.ts). */
function parseSpec(text: unknown): unknown {
  try {
    return typeof text === 'string' ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
}

function latest(jobs: JobSummary[], at: (job: JobSummary) => number, max: number): JobSummary[] {
  return jobs.sort((a, b) => at(b) - at(a) || a.jobId.localeCompare(b.jobId)).slice(0, max);
}

export interface QueueDepth {
  /** messages available to a receive (ApproximateNumberOfMessages) */
  visible: number;
  /** messages received and not yet deleted or made visible again (ApproximateNumberOfMessagesNotVisible) */
  inFlight: number;
}

/**
 * How many messages a queue holds, without receiving any: a receive would hide them from everyone else (a redrive
 * included) for its visibility timeout, and SQS has no way to look at a message without hiding it
 * (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-visibility-timeout.html). The counts
 * are approximate (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_GetQueueAttributes.html).
 */
export async function queueDepth(sqs: SQSClient, queueUrl: string): Promise<QueueDepth> {
  const { Attributes } = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    }),
  );
  return {
    visible: Number(Attributes?.ApproximateNumberOfMessages ?? 0),
    inFlight: Number(Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0),
  };
}

/** The pools with their holders and next waiters (Queries and GetItems: no Scan), as the dashboard shows them. */
export function readPools(doc: DynamoDBDocumentClient, table: string, waiters: number, region?: string): Promise<PoolDetail[]> {
  return poolDetails(
    { leases: new DynamoLeaseStore(doc, table), ledger: new DynamoJobLedger(doc, table) },
    { records: true, waiters, ...(region !== undefined && { region }) },
  );
}
