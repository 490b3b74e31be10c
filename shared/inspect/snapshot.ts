import type { SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoJobLedger } from '../adapters/dynamodb/jobLedger';
import { DynamoLeaseStore } from '../adapters/dynamodb/leaseStore';
import { type DeadLetter, peekDeadLetters } from './deadLetters';
import { listJobs, type ListedJob } from './jobs';
import { type PoolDetail, poolDetails } from './pools';

/** What `sluice top` and the dashboard show, read at one moment with the user's own credentials. Nothing is written. */
export interface Snapshot {
  at: number;
  pools: PoolDetail[];
  /** the latest changed jobs, each with the name of what it starts */
  recentJobs: ListedJob[];
  /** the DLQ's messages (without receipt handles); undefined when no DLQ is known */
  deadLetters?: Array<Omit<DeadLetter, 'receiptHandle'>>;
}

export interface SnapshotSource {
  doc: DynamoDBDocumentClient;
  sqs: SQSClient;
  table: string;
  dlqUrl?: string;
}

export async function takeSnapshot(source: SnapshotSource, options: { recent?: number; waiters?: number } = {}): Promise<Snapshot> {
  const leases = new DynamoLeaseStore(source.doc, source.table);
  const ledger = new DynamoJobLedger(source.doc, source.table);
  const [pools, recentJobs, letters] = await Promise.all([
    poolDetails({ leases, ledger }, { records: true, waiters: options.waiters ?? 10 }),
    listJobs(source.doc, source.table, { max: options.recent ?? 20 }),
    source.dlqUrl ? peekDeadLetters(source.sqs, source.dlqUrl, 100) : Promise.resolve(undefined),
  ]);
  return {
    at: Date.now(),
    pools,
    recentJobs,
    ...(letters && { deadLetters: letters.map(({ receiptHandle: _r, ...letter }) => letter) }),
  };
}
