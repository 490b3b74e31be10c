import {
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import type { OpenRunCursor, OpenRunPage, SetRun, SetRunStore, SetRunSummary } from '../../ports/setRunStore';
import { COUNT_NOT_REPEATED, IS_NEW, RUN_EXISTS, RUN_OPEN } from './conditions';
import { type Backoff, contentionRetrying, type Send } from './contention';
import { applied, cancellationReasons } from './errors';
import { expiresAfter, SECONDS_PER_DAY } from './jobItem';
import { openSetRunKey, OPEN_SET_RUNS_PK, setKey, setRunKey, SET_RUN_PREFIX } from './keys';

/**
 * Job set runs in the one table: a run `pk SET#<set>, sk RUN#<run>` (total, its jobs' keys, the ended count, the
 * summary once completed), its entry on the open list `pk SETRUNS, sk <set>#<run>` while it is open, and the set's
 * own item `pk SET#<set>, sk SET` (paused). The run and its open entry are written together, so the reconciler
 * finds every open run by paging through one partition. A run's item is kept `retentionDays` once its completion was
 * announced (its last write), then DynamoDB's TTL deletes it (`expiresAt`), as a job record's once the job is finished.
 */
export class DynamoSetRunStore implements SetRunStore {
  /** Every request goes through it: contention (a transaction on the item) is tried again with backoff. */
  private readonly send: Send;

  private readonly retentionDays: number;

  constructor(
    doc: DynamoDBDocumentClient,
    private readonly tableName: string,
    options: { backoff?: Backoff; retentionDays?: number } = {},
  ) {
    this.send = contentionRetrying(doc, options.backoff);
    this.retentionDays = options.retentionDays ?? DEFAULT_RETENTION_DAYS;
  }

  async startRun(
    run: Omit<SetRun, 'ended' | 'countedAt' | 'completedAt' | 'summary' | 'checkedAt' | 'checkedOpen' | 'notifiedAt'>,
  ): Promise<boolean> {
    const item = setRunItem({ ...run, ended: 0 });
    try {
      await this.send(
        new TransactWriteCommand({
          TransactItems: [
            { Put: { TableName: this.tableName, Item: item, ConditionExpression: IS_NEW } },
            { Put: { TableName: this.tableName, Item: { ...openSetRunKey(run.set, run.run), set: run.set, run: run.run } } },
          ],
        }),
      );
      return true;
    } catch (error) {
      if (cancellationReasons(error)?.[0]?.Code === 'ConditionalCheckFailed') return false;
      throw error;
    }
  }

  async countEnded(set: string, run: string, jobId: string, at: number): Promise<SetRun | undefined> {
    try {
      const { Attributes } = await this.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: setRunKey(set, run),
          UpdateExpression: 'ADD ended :one SET countedAt = :at, lastCounted = :job',
          ConditionExpression: COUNT_NOT_REPEATED,
          ExpressionAttributeValues: { ':one': 1, ':at': at, ':job': jobId },
          ReturnValues: 'ALL_NEW',
        }),
      );
      return Attributes ? fromItem(Attributes) : undefined;
    } catch (error) {
      if ((error as { name?: string }).name !== 'ConditionalCheckFailedException') throw error;
      // No such run, or this job's count is in already (the SDK's retry of it, its answer lost): the run as it is.
      return this.getRun(set, run);
    }
  }

  async markChecked(set: string, run: string, at: number, open: number): Promise<void> {
    await applied(
      this.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: setRunKey(set, run),
          UpdateExpression: 'SET checkedAt = :at, checkedOpen = :open',
          ConditionExpression: RUN_EXISTS,
          ExpressionAttributeValues: { ':at': at, ':open': open },
        }),
      ),
    );
  }

  async complete(set: string, run: string, summary: SetRunSummary, at: number): Promise<boolean> {
    return applied(
      this.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: setRunKey(set, run),
          UpdateExpression: 'SET completedAt = :at, summary = :summary',
          ConditionExpression: RUN_OPEN,
          ExpressionAttributeValues: { ':at': at, ':summary': summary },
        }),
      ),
    );
  }

  async markNotified(set: string, run: string, at: number): Promise<void> {
    await this.send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Update: {
              TableName: this.tableName,
              Key: setRunKey(set, run),
              // Done: kept as long as a finished job's record, then expired.
              UpdateExpression: 'SET notifiedAt = :at, expiresAt = :expiresAt',
              ExpressionAttributeValues: { ':at': at, ':expiresAt': expiresAfter(at, this.retentionDays * SECONDS_PER_DAY) },
            },
          },
          { Delete: { TableName: this.tableName, Key: openSetRunKey(set, run) } },
        ],
      }),
    );
  }

  async getRun(set: string, run: string): Promise<SetRun | undefined> {
    const { Item } = await this.send(new GetCommand({ TableName: this.tableName, Key: setRunKey(set, run), ConsistentRead: true }));
    return Item ? fromItem(Item) : undefined;
  }

  async runs(set: string, max: number): Promise<SetRun[]> {
    const runs: SetRun[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await this.send(
        new QueryCommand({
          TableName: this.tableName,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
          ExpressionAttributeValues: { ':pk': setKey(set).pk, ':prefix': SET_RUN_PREFIX },
          ExclusiveStartKey: start,
        }),
      );
      runs.push(...(page.Items ?? []).map(fromItem));
      start = page.LastEvaluatedKey;
    } while (start);
    return runs.sort((a, b) => b.startedAt - a.startedAt || b.run.localeCompare(a.run)).slice(0, max);
  }

  async openRuns(options: { after?: OpenRunCursor; max?: number } = {}): Promise<OpenRunPage> {
    const { Items = [], LastEvaluatedKey } = await this.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': OPEN_SET_RUNS_PK },
        Limit: options.max ?? 100,
        ...(options.after && { ExclusiveStartKey: openSetRunKey(options.after.set, options.after.run) }),
      }),
    );
    const runs = (await Promise.all(Items.map((entry) => this.getRun(String(entry.set), String(entry.run))))).filter(
      (run): run is SetRun => run !== undefined && run.notifiedAt === undefined,
    );
    // The cursor is the page's last entry, not its last run: a page whose runs were all notified since still moves on.
    const last = Items[Items.length - 1];
    return LastEvaluatedKey && last ? { runs, next: { set: String(last.set), run: String(last.run) } } : { runs };
  }

  async setPaused(set: string, paused: boolean): Promise<void> {
    await this.send(new PutCommand({ TableName: this.tableName, Item: { ...setKey(set), set, paused } }));
  }

  async isPaused(set: string): Promise<boolean> {
    const { Item } = await this.send(new GetCommand({ TableName: this.tableName, Key: setKey(set), ConsistentRead: true }));
    return Item?.paused === true;
  }
}

/** How long a run is kept once done, unless told: the job ledger's default (shared/config/settings.ts, LEDGER_RETENTION_DAYS). */
const DEFAULT_RETENTION_DAYS = 30;

/** A run's item, as written (its size is what DynamoDB's 400 KB limit applies to: see shared/domain/jobSets.ts). */
export function setRunItem(run: SetRun): Record<string, unknown> {
  return { ...setRunKey(run.set, run.run), ...run };
}

function fromItem(item: Record<string, unknown>): SetRun {
  return {
    set: String(item.set),
    run: String(item.run),
    total: Number(item.total),
    keys: (item.keys as string[] | undefined) ?? [],
    ended: Number(item.ended ?? 0),
    startedAt: Number(item.startedAt),
    ...(item.countedAt !== undefined && { countedAt: Number(item.countedAt) }),
    ...(item.scheduledFor !== undefined && { scheduledFor: Number(item.scheduledFor) }),
    ...(item.completedAt !== undefined && { completedAt: Number(item.completedAt) }),
    ...(item.summary !== undefined && { summary: item.summary as SetRunSummary }),
    ...(item.checkedAt !== undefined && { checkedAt: Number(item.checkedAt) }),
    ...(item.checkedOpen !== undefined && { checkedOpen: Number(item.checkedOpen) }),
    ...(item.notifiedAt !== undefined && { notifiedAt: Number(item.notifiedAt) }),
  };
}
