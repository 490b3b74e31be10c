import { BatchGetCommand, type BatchGetCommandOutput, type DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { jobKey } from '../adapters/dynamodb/keys';
import { fromJobItem } from '../adapters/dynamodb/jobItem';
import type { JobRecord } from '../ports/jobLedger';
import { targetNameOf } from './targetName';

/** A job's record as listed: with the name of what it starts (its kind's targetName), when its kind can name it. */
export type ListedJob = JobRecord & { target?: string };

/** The record with its target's name. */
export function listed(record: JobRecord): ListedJob {
  const target = targetNameOf(record.kind, record.spec);
  return target === undefined ? record : { ...record, target };
}

export interface JobFilter {
  pool?: string;
  state?: string;
  /** most jobs returned, the latest changed first */
  max: number;
}

/**
 * Jobs of the ledger by pool and state, the latest changed first. The table has no index by state (the hot paths never
 * need one), so this is a Scan of the job records with a filter: it reads the whole table, which is cheap locally and
 * for the ledger's 30-day retention of an ordinary stage, and costs read units in proportion to the table on AWS.
 */
export async function listJobs(doc: DynamoDBDocumentClient, table: string, filter: JobFilter): Promise<ListedJob[]> {
  const names: Record<string, string> = { '#pk': 'pk' };
  const values: Record<string, unknown> = { ':job': 'JOB#' };
  const conditions = ['begins_with(#pk, :job)'];
  if (filter.pool !== undefined) {
    names['#pool'] = 'pool';
    values[':pool'] = filter.pool;
    conditions.push('#pool = :pool');
  }
  if (filter.state !== undefined) {
    names['#state'] = 'state';
    values[':state'] = filter.state;
    conditions.push('#state = :state');
  }
  const records: JobRecord[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await doc.send(
      new ScanCommand({
        TableName: table,
        FilterExpression: conditions.join(' AND '),
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
        ExclusiveStartKey: start,
      }),
    );
    for (const item of page.Items ?? []) records.push(fromJobItem(item));
    start = page.LastEvaluatedKey;
  } while (start);
  return records
    .sort((a, b) => b.updatedAt - a.updatedAt || a.jobId.localeCompare(b.jobId))
    .slice(0, filter.max)
    .map(listed);
}

/** A job id the ledger has a record of, and the record's state. */
export interface KnownJob {
  jobId: string;
  state: string;
}

/** BatchGetItem reads at most 100 items a call. */
const BATCH_GET = 100;
/** Calls for the keys DynamoDB left unprocessed (throttling) before giving up on them. */
const UNPROCESSED_ROUNDS = 5;

/**
 * Some attributes of each of these jobs' records (a record that does not exist: none), read by key with BatchGetItem,
 * 100 ids a call, only the id and those attributes; keys DynamoDB leaves unprocessed are asked again up to
 * UNPROCESSED_ROUNDS times. `unread`: how many it still left unread.
 */
export async function readJobFields(
  doc: DynamoDBDocumentClient,
  table: string,
  ids: readonly string[],
  fields: readonly string[],
): Promise<{ items: Map<string, Record<string, unknown>>; unread: number }> {
  const items = new Map<string, Record<string, unknown>>();
  const unique = [...new Set(ids)];
  const names: Record<string, string> = { '#id': 'jobId' };
  fields.filter((field) => field !== 'jobId').forEach((field, i) => (names[`#a${i}`] = field));
  let unread = 0;
  for (let i = 0; i < unique.length; i += BATCH_GET) {
    let keys: Array<Record<string, unknown>> | undefined = unique.slice(i, i + BATCH_GET).map(jobKey);
    for (let round = 0; keys?.length && round < UNPROCESSED_ROUNDS; round++) {
      const out: BatchGetCommandOutput = await doc.send(
        new BatchGetCommand({
          RequestItems: { [table]: { Keys: keys, ProjectionExpression: Object.keys(names).join(', '), ExpressionAttributeNames: names } },
        }),
      );
      for (const item of out.Responses?.[table] ?? []) items.set(String(item.jobId), item);
      keys = out.UnprocessedKeys?.[table]?.Keys;
    }
    unread += keys?.length ?? 0;
  }
  return { items, unread };
}

/** One attribute of each of these jobs' records (readJobFields). */
export async function readJobAttribute(
  doc: DynamoDBDocumentClient,
  table: string,
  ids: readonly string[],
  attribute: string,
): Promise<{ values: Map<string, unknown>; unread: number }> {
  const { items, unread } = await readJobFields(doc, table, ids, [attribute]);
  return { values: new Map([...items].map(([id, item]) => [id, item[attribute]])), unread };
}

/** These jobs' records, read by key (BatchGetItem, 100 a call), in the order given; a record that does not exist: none. */
export async function readJobRecords(doc: DynamoDBDocumentClient, table: string, ids: readonly string[]): Promise<ListedJob[]> {
  const records = new Map<string, JobRecord>();
  const unique = [...new Set(ids)];
  for (let i = 0; i < unique.length; i += BATCH_GET) {
    let keys: Array<Record<string, unknown>> | undefined = unique.slice(i, i + BATCH_GET).map(jobKey);
    for (let round = 0; keys?.length && round < UNPROCESSED_ROUNDS; round++) {
      const out: BatchGetCommandOutput = await doc.send(new BatchGetCommand({ RequestItems: { [table]: { Keys: keys } } }));
      for (const item of out.Responses?.[table] ?? []) records.set(String(item.jobId), fromJobItem(item));
      keys = out.UnprocessedKeys?.[table]?.Keys;
    }
  }
  return unique.flatMap((id) => (records.has(id) ? [listed(records.get(id)!)] : []));
}

/**
 * Which of `ids` the ledger knows (a record in any state: the acquirer runs an id once, so sending a known id again runs
 * nothing), in the order given.
 */
export async function knownJobs(doc: DynamoDBDocumentClient, table: string, ids: readonly string[]): Promise<KnownJob[]> {
  const { values: states, unread } = await readJobAttribute(doc, table, ids, 'state');
  if (unread > 0) throw new Error(`DynamoDB left ${unread} ids unread (throttled): try again`);
  return [...new Set(ids)].filter((id) => states.has(id)).map((jobId) => ({ jobId, state: String(states.get(jobId)) }));
}
