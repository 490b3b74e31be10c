import { GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { BatchGetCommand, type BatchGetCommandOutput, type DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoJobLedger } from '../adapters/dynamodb/jobLedger';
import { jobKey } from '../adapters/dynamodb/keys';
import { DynamoLeaseStore } from '../adapters/dynamodb/leaseStore';
import { JobState } from '../domain/jobState';
import type { JobRecord } from '../ports/jobLedger';
import { type PoolDetail, poolDetails } from './pools';
import { targetNameOf } from './targetName';

/** A job as a view lists it: what its row shows, with the name of what it starts instead of its spec. */
export type JobSummary = Pick<
  JobRecord,
  'jobId' | 'pool' | 'kind' | 'state' | 'attempts' | 'updatedAt' | 'executionId' | 'lastError' | 'deadLetteredAt'
> & { target?: string };

const SUMMARY_FIELDS = ['jobId', 'pool', 'kind', 'state', 'attempts', 'updatedAt', 'executionId', 'lastError', 'deadLetteredAt'] as const;

export interface JobsView {
  /** the latest changed jobs, the latest first */
  recent: JobSummary[];
  /** the jobs dead-lettered (state dead, their DLQ copy sent), the latest first: what the DLQ holds, read from the table */
  deadLettered: JobSummary[];
}

/**
 * The latest changed jobs and the dead-lettered ones, in one pass over the ledger. The table has no index by time or
 * state (its indexes are `holders` and `due`), so this is a Scan of the job records: it reads, and on AWS is charged
 * for, the whole table whatever the filter and projection
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Scan.html#Scan.CapacityUnits); the projection only
 * keeps specs (up to 64 KiB each) off the wire: the specs of the jobs kept, for their target names, are read after,
 * by key. Callers read it seldom (the dashboard: at most once per JOBS_EVERY_MS).
 */
export async function readJobsView(
  doc: DynamoDBDocumentClient,
  table: string,
  max: { recent: number; deadLettered: number },
): Promise<JobsView> {
  const names: Record<string, string> = { '#pk': 'pk' };
  for (const field of SUMMARY_FIELDS) names[`#${field}`] = field;
  let recent: JobSummary[] = [];
  let deadLettered: JobSummary[] = [];
  let start: Record<string, unknown> | undefined;
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
    const jobs = (page.Items ?? []) as JobSummary[];
    recent = latest([...recent, ...jobs], (job) => job.updatedAt, max.recent);
    deadLettered = latest(
      [...deadLettered, ...jobs.filter((job) => job.state === JobState.Dead && job.deadLetteredAt !== undefined)],
      (job) => job.deadLetteredAt!,
      max.deadLettered,
    );
    start = page.LastEvaluatedKey;
  } while (start);
  const specs = await specsOf(
    doc,
    table,
    [...recent, ...deadLettered].map((job) => job.jobId),
  );
  const named = (job: JobSummary): JobSummary => {
    const target = targetNameOf(job.kind, specs.get(job.jobId));
    return target === undefined ? job : { ...job, target };
  };
  return { recent: recent.map(named), deadLettered: deadLettered.map(named) };
}

/** BatchGetItem reads at most 100 items a call. */
const BATCH_GET = 100;
/** Calls for the keys DynamoDB left unprocessed (throttling); a job still unread is listed without its target's name. */
const UNPROCESSED_ROUNDS = 5;

/** The specs of these jobs (a record gone since the Scan: none), read by key, 100 a call, only the id and spec. */
async function specsOf(doc: DynamoDBDocumentClient, table: string, ids: readonly string[]): Promise<Map<string, unknown>> {
  const specs = new Map<string, unknown>();
  const unique = [...new Set(ids)];
  for (let i = 0; i < unique.length; i += BATCH_GET) {
    let keys: Array<Record<string, unknown>> | undefined = unique.slice(i, i + BATCH_GET).map(jobKey);
    for (let round = 0; keys?.length && round < UNPROCESSED_ROUNDS; round++) {
      const out: BatchGetCommandOutput = await doc.send(
        new BatchGetCommand({
          RequestItems: {
            [table]: { Keys: keys, ProjectionExpression: '#id, #spec', ExpressionAttributeNames: { '#id': 'jobId', '#spec': 'spec' } },
          },
        }),
      );
      for (const item of out.Responses?.[table] ?? []) specs.set(String(item.jobId), parseSpec(item.spec));
      keys = out.UnprocessedKeys?.[table]?.Keys;
    }
  }
  return specs;
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
export function readPools(doc: DynamoDBDocumentClient, table: string, waiters: number): Promise<PoolDetail[]> {
  return poolDetails({ leases: new DynamoLeaseStore(doc, table), ledger: new DynamoJobLedger(doc, table) }, { records: true, waiters });
}
