import type { SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoJobLedger } from '../adapters/dynamodb/jobLedger';
import { DynamoLeaseStore } from '../adapters/dynamodb/leaseStore';
import { type DeadLetter, peekDeadLetters } from './deadLetters';
import { type ListedJob, readJobRecords } from './jobs';
import { type PoolDetail, poolDetails } from './pools';
import { readRecentJobIds } from './viewSnapshot';

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
  const waiters = options.waiters ?? 10;
  const recent = options.recent ?? 20;
  // The pools are read once: shown with their first `waiters` waiters, and their holders and first `recent` waiters
  // among the latest jobs.
  const read = poolDetails({ leases, ledger }, { records: true, waiters: Math.max(waiters, recent) });
  const [pools, recentJobs, letters] = await Promise.all([
    read,
    // The latest jobs from the indexes (holders, waiting lists, the ended index), no Scan: their records read by key.
    readRecentJobIds(source.doc, source.table, { recent, now: Date.now(), pools: read }).then((ids) =>
      readJobRecords(source.doc, source.table, ids),
    ),
    source.dlqUrl ? peekDeadLetters(source.sqs, source.dlqUrl, 100) : Promise.resolve(undefined),
  ]);
  return {
    at: Date.now(),
    pools: pools.map((pool) => ({ ...pool, next: pool.next.slice(0, waiters) })),
    recentJobs,
    ...(letters && { deadLetters: letters.map(({ receiptHandle: _r, ...letter }) => letter) }),
  };
}
