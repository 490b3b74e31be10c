import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  paginateQuery,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  type TransactWriteCommandInput,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import type { JobKind } from '../../domain/job';
import { JobState } from '../../domain/jobState';
import type { PoolSnapshot } from '../../domain/pool';
import type { Waiter } from '../../domain/waiting';
import type { Move } from '../../ports/jobLedger';
import { ClaimOutcome, type HolderPage, type LeaseStore, PassOutcome, ReserveOutcome, TakeOutcome } from '../../ports/leaseStore';
import {
  ADMITTABLE,
  IS_NEW,
  POOL_HAS_ROOM,
  POOL_OVER_LIMIT,
  POOL_WITHIN_LIMIT,
  SAME_VERSION_FREE,
  SAME_VERSION_HOLDING,
  SAME_VERSION_RESERVED,
} from './conditions';
import { applied, type CancellationReason, cancellationReasons, failedCondition } from './errors';
import { moveUpdate, type UpdateParts } from './jobItem';
import { jobKey, POOL_REGISTRY_PK, poolKey, poolRegistryKey, WAIT_PREFIX, waiterKey } from './keys';

/** The sparse index of job records holding a slot (serverless.yml: SluiceTable, GlobalSecondaryIndexes). */
export const HOLDERS_INDEX = 'holders';

/** AWS cancels a transaction that meets another one on the same item (TransactionConflict): it is tried again. */
const MAX_CONFLICT_TRIES = 4;
/** Up to this many ms times the try number between conflicting tries. */
const CONFLICT_BACKOFF_MS = 20;

interface PoolItem {
  limit: number;
  inUse: number;
}

interface WaiterItem {
  sk: string;
  jobId: string;
  kind: JobKind;
  body: string;
  since: number;
}

type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

export interface LeaseStoreOptions {
  retentionDays: number;
}

/**
 * Pools as small counter items (pk POOL#<pool>, sk POOL: limit, inUse) and slots as leases on job records, changed
 * together by TransactWriteItems. An item's size never depends on the limit, so neither does any write's cost.
 */
export class DynamoLeaseStore implements LeaseStore {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly options: LeaseStoreOptions = { retentionDays: 30 },
  ) {}

  async getPool(pool: string): Promise<PoolSnapshot | undefined> {
    const { Item } = await this.doc.send(new GetCommand({ TableName: this.tableName, Key: poolKey(pool), ConsistentRead: true }));
    if (!Item) return undefined;
    const item = Item as PoolItem;
    return { name: pool, limit: item.limit, inUse: item.inUse };
  }

  async listPools(): Promise<string[]> {
    const names: string[] = [];
    const pages = paginateQuery(
      { client: this.doc },
      { TableName: this.tableName, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': POOL_REGISTRY_PK } },
    );
    for await (const page of pages) for (const item of page.Items ?? []) names.push(String(item.sk));
    return names;
  }

  async createPool(pool: string, limit: number): Promise<boolean> {
    const created = await applied(
      this.doc.send(
        new PutCommand({ TableName: this.tableName, Item: { ...poolKey(pool), limit, inUse: 0 }, ConditionExpression: IS_NEW }),
      ),
    );
    // Registered on both paths: a creation that died before this write is listed the next time the pool is used.
    await this.register(pool);
    return created;
  }

  async setLimit(pool: string, limit: number): Promise<void> {
    await this.doc.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: poolKey(pool),
        UpdateExpression: 'SET #limit = :limit, inUse = if_not_exists(inUse, :zero)',
        ExpressionAttributeNames: { '#limit': 'limit' },
        ExpressionAttributeValues: { ':limit': limit, ':zero': 0 },
      }),
    );
    await this.register(pool);
  }

  async holders(pool: string, options: { after?: string; max?: number } = {}): Promise<HolderPage> {
    const { Items, LastEvaluatedKey } = await this.doc.send(
      new QueryCommand({
        TableName: this.tableName,
        IndexName: HOLDERS_INDEX,
        KeyConditionExpression: 'holderPool = :pool',
        ExpressionAttributeValues: { ':pool': pool },
        Limit: options.max ?? 100,
        ExclusiveStartKey: options.after === undefined ? undefined : { holderPool: pool, ...jobKey(options.after) },
      }),
    );
    const holders = (Items ?? []).map((item) => ({
      jobId: String(item.pk).slice('JOB#'.length),
      kind: item.kind as JobKind,
      since: Number(item.leaseSince),
    }));
    return LastEvaluatedKey && holders.length > 0 ? { holders, next: holders[holders.length - 1]!.jobId } : { holders };
  }

  async take(pool: string, move: Move, now: number): Promise<TakeOutcome> {
    const reasons = await this.transact([
      this.counter(pool, POOL_HAS_ROOM, 1, true),
      this.job(moveUpdate(move, now, { take: { pool, since: now } }, this.options.retentionDays, SAME_VERSION_FREE), move.jobId),
    ]);
    if (!reasons) return TakeOutcome.Taken;
    if (failedCondition(reasons[1])) return TakeOutcome.Stale;
    return reasons[0]?.Item ? TakeOutcome.Full : TakeOutcome.NoPool;
  }

  async free(pool: string, move: Move, now: number): Promise<boolean> {
    const reasons = await this.transact([this.counter(pool, 'attribute_exists(pk)', -1), this.holding(pool, move, now, 'free')]);
    return reasons === undefined;
  }

  async freeOverLimit(pool: string, move: Move, now: number): Promise<boolean> {
    const reasons = await this.transact([this.counter(pool, POOL_OVER_LIMIT, -1), this.holding(pool, move, now, 'free')]);
    return reasons === undefined;
  }

  async claim(pool: string, move: Move, now: number): Promise<ClaimOutcome> {
    const update = moveUpdate(move, now, 'keep', this.options.retentionDays, SAME_VERSION_RESERVED);
    update.ExpressionAttributeValues[':pool'] = pool;
    update.ExpressionAttributeValues[':reserved'] = JobState.Reserved;
    const reasons = await this.transact([this.counterCheck(pool, POOL_WITHIN_LIMIT), this.job(update, move.jobId)]);
    if (!reasons) return ClaimOutcome.Claimed;
    return failedCondition(reasons[1]) ? ClaimOutcome.Stale : ClaimOutcome.OverLimit;
  }

  async pass(pool: string, from: Move, toJobId: string, now: number, waitKey?: string): Promise<PassOutcome> {
    if (from.jobId === toJobId) throw new Error(`cannot pass a slot from job ${toJobId} to itself`);
    const reasons = await this.transact([
      this.counterCheck(pool, POOL_WITHIN_LIMIT),
      this.holding(pool, from, now, 'free'),
      this.receiving(pool, toJobId, now),
      ...this.waiterGone(pool, waitKey),
    ]);
    if (!reasons) return PassOutcome.Passed;
    if (failedCondition(reasons[1])) return PassOutcome.Stale;
    if (failedCondition(reasons[2])) return PassOutcome.TargetGone;
    return PassOutcome.OverLimit;
  }

  async reserve(pool: string, jobId: string, now: number, waitKey?: string): Promise<ReserveOutcome> {
    const reasons = await this.transact([
      this.counter(pool, POOL_HAS_ROOM, 1, true),
      this.receiving(pool, jobId, now),
      ...this.waiterGone(pool, waitKey),
    ]);
    if (!reasons) return ReserveOutcome.Reserved;
    if (failedCondition(reasons[1])) return ReserveOutcome.TargetGone;
    return reasons[0]?.Item ? ReserveOutcome.Full : ReserveOutcome.NoPool;
  }

  async addWaiter(waiter: Waiter): Promise<void> {
    await this.doc.send(
      new PutCommand({
        TableName: this.tableName,
        Item: { ...waiterKey(waiter.pool, waiter.waitKey), jobId: waiter.jobId, kind: waiter.kind, body: waiter.body, since: waiter.since },
      }),
    );
  }

  async oldestWaiters(pool: string, count: number): Promise<Waiter[]> {
    if (count <= 0) return [];
    const { Items } = await this.doc.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :wait)',
        ExpressionAttributeValues: { ':pk': poolKey(pool).pk, ':wait': WAIT_PREFIX },
        ConsistentRead: true,
        Limit: count,
      }),
    );
    return (Items ?? []).map((item) => toWaiter(pool, item as WaiterItem));
  }

  async getWaiter(pool: string, waitKey: string): Promise<Waiter | undefined> {
    const { Item } = await this.doc.send(
      new GetCommand({ TableName: this.tableName, Key: waiterKey(pool, waitKey), ConsistentRead: true }),
    );
    return Item ? toWaiter(pool, Item as WaiterItem) : undefined;
  }

  async removeWaiter(pool: string, waitKey: string): Promise<void> {
    await this.doc.send(new DeleteCommand({ TableName: this.tableName, Key: waiterKey(pool, waitKey) }));
  }

  async countWaiters(pool: string): Promise<number> {
    let total = 0;
    const pages = paginateQuery(
      { client: this.doc },
      {
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :wait)',
        ExpressionAttributeValues: { ':pk': poolKey(pool).pk, ':wait': WAIT_PREFIX },
        Select: 'COUNT',
      },
    );
    for await (const page of pages) total += page.Count ?? 0;
    return total;
  }

  /**
   * Runs a transaction: undefined when applied, else why each item failed (some condition did). Conflicts with other
   * transactions are retried; once the tries are used up, or for any other cancellation, the error is thrown.
   */
  private async transact(items: TransactItem[]): Promise<CancellationReason[] | undefined> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.doc.send(new TransactWriteCommand({ TransactItems: items }));
        return undefined;
      } catch (error) {
        const reasons = cancellationReasons(error);
        if (!reasons) throw error;
        // Only failed conditions are outcomes. Conflicts (tries used up) or any other reason say nothing of the items:
        // thrown, not read as a full pool, a missing one or a stale record.
        if (reasons.some(failedCondition)) return reasons;
        const conflict = reasons.some((reason) => reason.Code === 'TransactionConflict');
        if (!conflict || attempt >= MAX_CONFLICT_TRIES) throw error;
        // A hot pool's counter meets other transactions: wait a little, with jitter, so the retries spread out.
        await new Promise((resolve) => setTimeout(resolve, Math.random() * CONFLICT_BACKOFF_MS * attempt));
      }
    }
  }

  /** The pool counter moved by `delta` under `condition` (ALL_OLD on failure tells a full pool from a missing one). */
  private counter(pool: string, condition: string, delta: number, needsLimit = false): TransactItem {
    return {
      Update: {
        TableName: this.tableName,
        Key: poolKey(pool),
        UpdateExpression: 'ADD inUse :delta',
        ConditionExpression: condition,
        ...(needsLimit || condition.includes('#limit') ? { ExpressionAttributeNames: { '#limit': 'limit' } } : {}),
        ExpressionAttributeValues: { ':delta': delta },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      },
    };
  }

  private counterCheck(pool: string, condition: string): TransactItem {
    return {
      ConditionCheck: {
        TableName: this.tableName,
        Key: poolKey(pool),
        ConditionExpression: condition,
        ExpressionAttributeNames: { '#limit': 'limit' },
      },
    };
  }

  /** A version-fenced move of a job that holds a slot of `pool`. */
  private holding(pool: string, move: Move, now: number, lease: 'free' | 'keep'): TransactItem {
    const update = moveUpdate(move, now, lease, this.options.retentionDays, SAME_VERSION_HOLDING);
    update.ExpressionAttributeValues[':pool'] = pool;
    return this.job(update, move.jobId);
  }

  /** A queued or waiting job receiving a slot: it becomes reserved. */
  private receiving(pool: string, jobId: string, now: number): TransactItem {
    return {
      Update: {
        TableName: this.tableName,
        Key: jobKey(jobId),
        UpdateExpression: 'SET #state = :reserved, holderPool = :pool, leaseSince = :now, updatedAt = :now, #version = #version + :one',
        ConditionExpression: ADMITTABLE,
        ExpressionAttributeNames: { '#state': 'state', '#version': 'version' },
        ExpressionAttributeValues: {
          ':reserved': JobState.Reserved,
          ':queued': JobState.Queued,
          ':waiting': JobState.Waiting,
          ':pool': pool,
          ':now': now,
          ':one': 1,
        },
      },
    };
  }

  /** The waiter item of a job receiving a slot, deleted in the same transaction (none when no wait key is given). */
  private waiterGone(pool: string, waitKey: string | undefined): TransactItem[] {
    return waitKey === undefined ? [] : [{ Delete: { TableName: this.tableName, Key: waiterKey(pool, waitKey) } }];
  }

  private job(update: UpdateParts, jobId: string): TransactItem {
    return { Update: { TableName: this.tableName, Key: jobKey(jobId), ...update } };
  }

  private async register(pool: string): Promise<void> {
    await this.doc.send(new PutCommand({ TableName: this.tableName, Item: poolRegistryKey(pool) }));
  }
}

function toWaiter(pool: string, item: WaiterItem): Waiter {
  return { pool, jobId: item.jobId, kind: item.kind, waitKey: item.sk.slice(WAIT_PREFIX.length), body: item.body, since: item.since };
}
