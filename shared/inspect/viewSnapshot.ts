import { GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { type DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoJobLedger } from '../adapters/dynamodb/jobLedger';
import { DynamoLeaseStore } from '../adapters/dynamodb/leaseStore';
import { JobState } from '../domain/jobState';
import type { JobRecord } from '../ports/jobLedger';
import { type PoolDetail, poolDetails } from './pools';
import { consoleUrlOf } from './consoleUrl';
import { inWindow, type RunTimes } from './runHistory';
import { readJobAttribute } from './jobs';
import { targetNameOf } from './targetName';

/** A job as a view lists it: what its row shows, with the name of what it starts instead of its spec. */
export type JobSummary = Pick<
  JobRecord,
  'jobId' | 'pool' | 'kind' | 'state' | 'attempts' | 'updatedAt' | 'executionId' | 'lastError' | 'deadLetteredAt' | 'startedAt' | 'endedAt'
> & { target?: string; /** its run in the AWS console (its kind's consoleUrl) */ consoleUrl?: string };

const SUMMARY_FIELDS = [
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
  /** the Scan stopped at its page limit: the lists and the history are of the part of the table it read */
  truncated: boolean;
}

export interface JobsViewOptions {
  recent: number;
  deadLettered: number;
  /** the history's end (epoch ms): the records of jobs that ran in the day before it are kept */
  now: number;
  /** the AWS region the runs are in, for their console links (none without it) */
  region?: string;
  /** the most Scan pages read (each up to 1 MB of the table) */
  maxPages?: number;
}

/** A Scan reads up to 1 MB a page: 100 pages are a table of up to 100 MB (about 12,800 read units a pass). */
export const MAX_SCAN_PAGES = 100;

/**
 * The latest changed jobs, the dead-lettered ones and the last day's run times, in one pass over the ledger. The table
 * has no index by time or state (its indexes are `holders`, the jobs holding a slot now, and `due`), so this is a Scan
 * of the job records: it reads, and on AWS is charged for, the whole table whatever the filter and projection (0.5 read
 * unit per 4 KB: https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Scan.html#Scan.CapacityUnits), up to
 * `maxPages` pages; the projection only keeps specs (up to 64 KiB each) off the wire: the specs of the jobs kept, for
 * their target names, are read after, by key. Callers read it seldom (the dashboard: at most once per JOBS_EVERY_MS).
 */
export async function readJobsView(doc: DynamoDBDocumentClient, table: string, options: JobsViewOptions): Promise<JobsView> {
  const names: Record<string, string> = { '#pk': 'pk' };
  for (const field of SUMMARY_FIELDS) names[`#${field}`] = field;
  let recent: JobSummary[] = [];
  const byState = new Map<string, JobSummary[]>();
  let deadLettered: JobSummary[] = [];
  const runTimes: RunTimes[] = [];
  let start: Record<string, unknown> | undefined;
  let pages = 0;
  do {
    const page = await doc.send(
      new ScanCommand({
        TableName: table,
        FilterExpression: 'begins_with(#pk, :job)',
        ProjectionExpression: SUMMARY_FIELDS.map((field) => `#${field}`).join(', '),
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: { ':job': 'JOB#' },
        ExclusiveStartKey: start,
      }),
    );
    pages++;
    const jobs = (page.Items ?? []) as JobSummary[];
    recent = latest([...recent, ...jobs], (job) => job.updatedAt, options.recent);
    for (const job of jobs)
      byState.set(
        job.state,
        latest([...(byState.get(job.state) ?? []), job], (j) => j.updatedAt, options.recent),
      );
    deadLettered = latest(
      [...deadLettered, ...jobs.filter((job) => job.state === JobState.Dead && job.deadLetteredAt !== undefined)],
      (job) => job.deadLetteredAt!,
      options.deadLettered,
    );
    for (const job of jobs) if (inWindow(job, options.now)) runTimes.push(runTimesOf(job));
    start = page.LastEvaluatedKey;
  } while (start && pages < (options.maxPages ?? MAX_SCAN_PAGES));
  const listed = latest(
    [...new Map([...recent, ...[...byState.values()].flat()].map((job) => [job.jobId, job])).values()],
    (job) => job.updatedAt,
    Infinity,
  );
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
  return { recent: listed.map(named), deadLettered: deadLettered.map(named), runTimes, truncated: start !== undefined };
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

/** The specs of these jobs (a record gone since the Scan: none; one still unread after throttling: listed without its target's name). */
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
