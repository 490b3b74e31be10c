import {
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { dueAtOfSortKey, dueUpToBound } from '../../domain/notBefore';
import { JobState } from '../../domain/jobState';
import type { JobRecord, Move } from '../../ports/jobLedger';
import type { DuePage, ScheduleStore, WaiterRef } from '../../ports/scheduleStore';
import { CANCELLABLE, CURSOR_BEHIND, IS_NEW, SAME_VERSION_SCHEDULED } from './conditions';
import { type Backoff, contentionRetrying, type Send } from './contention';
import { applied, cancellationReasons, failedCondition, isConditionalCheckFailed } from './errors';
import { moveUpdate, toJobItem } from './jobItem';
import { jobKey, loaderCursorKey, waiterKey } from './keys';

/** The sparse index of scheduled jobs due beyond 15 minutes (serverless.yml: SluiceTable, GlobalSecondaryIndexes). */
export const DUE_INDEX = 'due';

export interface ScheduleStoreOptions {
  /** How to wait between tries that met contention (real timers and jitter by default). */
  backoff?: Backoff;
  retentionDays: number;
}

/**
 * Scheduled jobs are job records in state `scheduled`; one due beyond 15 minutes carries `dueBucket` (a minute and a
 * shard) and `dueSk` (due time and job id), the keys of the sparse `due` index (KEYS_ONLY: the loader reads the record
 * itself, consistently, for the version it fences its `load` with). Any move out of scheduled removes both
 * (jobItem.ts moveUpdate), so the index holds exactly the scheduled jobs the loader has not sent.
 */
export class DynamoScheduleStore implements ScheduleStore {
  /** Every request goes through it: contention (a transaction on the item) is tried again with backoff. */
  private readonly send: Send;

  constructor(
    doc: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly options: ScheduleStoreOptions = { retentionDays: 30 },
  ) {
    this.send = contentionRetrying(doc, options.backoff);
  }

  async schedule(record: JobRecord, index?: { bucket: string; sortKey: string }): Promise<boolean> {
    if (record.state !== JobState.Scheduled) throw new Error(`schedule writes a scheduled record, not ${record.state}`);
    const item = { ...toJobItem(record), ...(index && { dueBucket: index.bucket, dueSk: index.sortKey }) };
    return applied(this.send(new PutCommand({ TableName: this.tableName, Item: item, ConditionExpression: IS_NEW })));
  }

  async due(bucket: string, upTo: number, options: { after?: string; max?: number } = {}): Promise<DuePage> {
    const { Items, LastEvaluatedKey } = await this.send(
      new QueryCommand({
        TableName: this.tableName,
        IndexName: DUE_INDEX,
        KeyConditionExpression: 'dueBucket = :bucket AND dueSk <= :upTo',
        ExpressionAttributeValues: { ':bucket': bucket, ':upTo': dueUpToBound(upTo) },
        Limit: options.max ?? 100,
        ...(options.after !== undefined && {
          ExclusiveStartKey: { dueBucket: bucket, dueSk: options.after, ...jobKey(jobIdOfSortKey(options.after)) },
        }),
      }),
    );
    const entries = (Items ?? []).map((item) => ({ jobId: String(item.pk).slice('JOB#'.length), sortKey: String(item.dueSk) }));
    const jobs = entries.map(({ jobId, sortKey }) => ({ jobId, dueAt: dueAtOfSortKey(sortKey) }));
    return LastEvaluatedKey && entries.length > 0 ? { jobs, next: entries[entries.length - 1]!.sortKey } : { jobs };
  }

  async load(move: Move, now: number): Promise<boolean> {
    const update = moveUpdate(move, now, 'keep', this.options.retentionDays, SAME_VERSION_SCHEDULED);
    update.ExpressionAttributeValues[':scheduled'] = JobState.Scheduled;
    return applied(this.send(new UpdateCommand({ TableName: this.tableName, Key: jobKey(move.jobId), ...update })));
  }

  async loaderCursor(): Promise<number | undefined> {
    const { Item } = await this.send(new GetCommand({ TableName: this.tableName, Key: loaderCursorKey(), ConsistentRead: true }));
    return Item?.minute === undefined ? undefined : Number(Item.minute);
  }

  async advanceLoaderCursor(minute: number): Promise<void> {
    try {
      await this.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: loaderCursorKey(),
          UpdateExpression: 'SET #minute = :minute',
          ConditionExpression: CURSOR_BEHIND,
          ExpressionAttributeNames: { '#minute': 'minute' },
          ExpressionAttributeValues: { ':minute': minute },
        }),
      );
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error; // another loader moved it as far already
    }
  }

  async cancel(move: Move, now: number, waiter?: WaiterRef): Promise<boolean> {
    const update = moveUpdate(move, now, 'keep', this.options.retentionDays, CANCELLABLE);
    Object.assign(update.ExpressionAttributeValues, {
      ':scheduled': JobState.Scheduled,
      ':queued': JobState.Queued,
      ':waiting': JobState.Waiting,
    });
    const job = { Update: { TableName: this.tableName, Key: jobKey(move.jobId), ...update } };
    if (!waiter) return applied(this.send(new UpdateCommand(job.Update)));
    try {
      await this.send(
        new TransactWriteCommand({
          TransactItems: [job, { Delete: { TableName: this.tableName, Key: waiterKey(waiter.gate, waiter.waitKey) } }],
        }),
      );
      return true;
    } catch (error) {
      const reasons = cancellationReasons(error);
      if (reasons?.some(failedCondition)) return false;
      throw error;
    }
  }
}

/** The job id a due sort key ends with (due time, '#', job id). */
function jobIdOfSortKey(sortKey: string): string {
  return sortKey.slice(sortKey.indexOf('#') + 1);
}
