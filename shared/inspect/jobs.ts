import { type DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
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
