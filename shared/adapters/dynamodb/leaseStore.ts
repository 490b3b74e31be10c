import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  paginateQuery,
  PutCommand,
  QueryCommand,
  UpdateCommand,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import type { JobKind } from '../../domain/job';
import { freeSlots, type Holder, isHeldBy, type PoolSnapshot } from '../../domain/pool';
import type { Waiter } from '../../domain/waiting';
import { AcquireOutcome, type LeaseStore, TransferOutcome } from '../../ports/leaseStore';
import { CAN_ACQUIRE, CAN_TRANSFER, HOLDS_SLOT, IS_NEW } from './conditions';
import { applied } from './errors';
import { POOL_REGISTRY_PK, poolKey, poolRegistryKey, WAIT_PREFIX, waiterKey } from './keys';

/** A lost race with room left is retried; past this, racing writers keep winning and the pool is as good as full. */
const MAX_ACQUIRE_ATTEMPTS = 3;

interface PoolItem {
  pk: string;
  limit: number;
  inUse: number;
  holders?: Record<string, Holder>;
}

interface WaiterItem {
  sk: string;
  jobId: string;
  kind: JobKind;
  body: string;
  since: number;
}

export class DynamoLeaseStore implements LeaseStore {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async getPool(pool: string): Promise<PoolSnapshot | undefined> {
    const { Item } = await this.doc.send(new GetCommand({ TableName: this.tableName, Key: poolKey(pool), ConsistentRead: true }));
    if (!Item) return undefined;
    const item = Item as PoolItem;
    return { name: pool, limit: item.limit, inUse: item.inUse, holders: item.holders ?? {} };
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
    // The holders map must exist before any write to holders.<job> (a nested path needs its parent).
    const created = await applied(
      this.doc.send(
        new PutCommand({
          TableName: this.tableName,
          Item: { ...poolKey(pool), limit, inUse: 0, holders: {} },
          ConditionExpression: IS_NEW,
        }),
      ),
    );
    // Registered on both paths: a creation that died before this write is listed the next time the pool is used.
    await this.register(pool);
    return created;
  }

  async setLimit(pool: string, limit: number): Promise<void> {
    await this.updatePool(pool, {
      UpdateExpression: 'SET #limit = :limit, holders = if_not_exists(holders, :empty), inUse = if_not_exists(inUse, :zero)',
      ExpressionAttributeNames: { '#limit': 'limit' },
      ExpressionAttributeValues: { ':limit': limit, ':empty': {}, ':zero': 0 },
    });
    await this.register(pool);
  }

  async acquire(pool: string, jobId: string, holder: Holder): Promise<AcquireOutcome> {
    for (let attempt = 1; ; attempt++) {
      const taken = await this.updatePool(pool, {
        UpdateExpression: 'SET holders.#job = :holder ADD inUse :one',
        ConditionExpression: CAN_ACQUIRE,
        ExpressionAttributeNames: { '#job': jobId, '#limit': 'limit' },
        ExpressionAttributeValues: { ':holder': holder, ':one': 1 },
      });
      if (taken) return AcquireOutcome.Acquired;
      // Why did it fail? (dynalite ignores ReturnValuesOnConditionCheckFailure, so read the item.)
      const current = await this.getPool(pool);
      if (!current) return AcquireOutcome.NoPool;
      if (isHeldBy(current, jobId)) return AcquireOutcome.AlreadyHeld;
      // Room now: the pool was created, or a slot freed, between the write and the read. Full only when it is full.
      if (freeSlots(current) === 0 || attempt >= MAX_ACQUIRE_ATTEMPTS) return AcquireOutcome.Full;
    }
  }

  async release(pool: string, jobId: string): Promise<boolean> {
    return this.updatePool(pool, {
      UpdateExpression: 'REMOVE holders.#job ADD inUse :minusOne',
      ConditionExpression: HOLDS_SLOT,
      ExpressionAttributeNames: { '#job': jobId },
      ExpressionAttributeValues: { ':minusOne': -1 },
    });
  }

  async transfer(pool: string, fromJobId: string, toJobId: string, holder: Holder): Promise<TransferOutcome> {
    // REMOVE and SET on one path would drop the holder and keep the count: the slot would leak.
    if (fromJobId === toJobId) throw new Error(`cannot transfer a slot from job ${fromJobId} to itself`);
    const moved = await this.updatePool(pool, {
      UpdateExpression: 'REMOVE holders.#from SET holders.#to = :holder',
      ConditionExpression: CAN_TRANSFER,
      ExpressionAttributeNames: { '#from': fromJobId, '#to': toJobId, '#limit': 'limit' },
      ExpressionAttributeValues: { ':holder': holder },
    });
    if (moved) return TransferOutcome.Transferred;
    const current = await this.getPool(pool);
    if (!current || !isHeldBy(current, fromJobId)) return TransferOutcome.NotHeld;
    if (isHeldBy(current, toJobId)) return TransferOutcome.TargetHeld;
    return TransferOutcome.OverLimit;
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

  /** One write to the pool item; false when its condition (if any) failed. */
  private updatePool(pool: string, update: Omit<UpdateCommandInput, 'TableName' | 'Key'>): Promise<boolean> {
    return applied(this.doc.send(new UpdateCommand({ TableName: this.tableName, Key: poolKey(pool), ...update })));
  }

  private async register(pool: string): Promise<void> {
    await this.doc.send(new PutCommand({ TableName: this.tableName, Item: poolRegistryKey(pool) }));
  }
}

function toWaiter(pool: string, item: WaiterItem): Waiter {
  return { pool, jobId: item.jobId, kind: item.kind, waitKey: item.sk.slice(WAIT_PREFIX.length), body: item.body, since: item.since };
}
