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
import { type Demand, exchange, type GateChange, gatesOf } from '../../domain/limits';
import type { PoolSnapshot } from '../../domain/pool';
import { type Waiter, waiterDemand, waiterGate } from '../../domain/waiting';
import type { Move } from '../../ports/jobLedger';
import {
  ClaimOutcome,
  type HolderPage,
  type LeaseStore,
  PassOutcome,
  type Receiver,
  ReserveOutcome,
  TakeOutcome,
} from '../../ports/leaseStore';
import {
  ADMITTABLE,
  GATE_EXISTS,
  GATE_HAS_ROOM,
  GATE_KNOWN,
  GATE_OVER_LIMIT,
  GATE_WITHIN_LIMIT,
  IS_NEW,
  ROUND_BEHIND,
  SAME_VERSION_FREE,
  SAME_VERSION_HOLDING,
  SAME_VERSION_RESERVED,
  TENANT_BEHIND,
} from './conditions';
import { applied, type CancellationReason, cancellationReasons, failedCondition, isConditionalCheckFailed } from './errors';
import { moveUpdate, type UpdateParts } from './jobItem';
import { jobKey, POOL_REGISTRY_PK, poolKey, poolRegistryKey, tenantKey, WAIT_PREFIX, waiterKey } from './keys';

/** The sparse index of job records holding a slot (serverless.yml: SluiceTable, GlobalSecondaryIndexes). */
export const HOLDERS_INDEX = 'holders';

/** AWS cancels a transaction that meets another one on the same item (TransactionConflict): it is tried again. */
const MAX_CONFLICT_TRIES = 4;
/** Up to this many ms times the try number between conflicting tries. */
const CONFLICT_BACKOFF_MS = 20;

interface PoolItem {
  limit: number;
  inUse: number;
  room: number;
  /** fairness: the round of the last fair job let in */
  round?: number;
}

interface WaiterItem {
  sk: string;
  jobId: string;
  kind: JobKind;
  body: string;
  since: number;
  /** the job's pool and demand (absent on items written before keyed limits: one unit of the gate) */
  pool?: string;
  keys?: string[];
  units?: number;
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
        new PutCommand({ TableName: this.tableName, Item: { ...poolKey(pool), limit, inUse: 0, room: limit }, ConditionExpression: IS_NEW }),
      ),
    );
    // Registered on both paths: a creation that died before this write is listed the next time the pool is used.
    await this.register(pool);
    return created;
  }

  async setLimit(pool: string, limit: number): Promise<void> {
    // room follows the limit in the same write (room = limit - inUse), so a condition on room sees the new limit.
    for (;;) {
      const set = await applied(
        this.doc.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: poolKey(pool),
            UpdateExpression: 'SET #limit = :limit, room = :limit - inUse',
            ConditionExpression: GATE_KNOWN,
            ExpressionAttributeNames: { '#limit': 'limit' },
            ExpressionAttributeValues: { ':limit': limit },
          }),
        ),
      );
      if (set || (await this.createPool(pool, limit))) break;
    }
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

  async take(demand: Demand, move: Move, now: number): Promise<TakeOutcome> {
    const counters = this.counters(exchange(undefined, demand));
    const update = moveUpdate(move, now, { take: { pool: demand.pool, since: now } }, this.options.retentionDays, SAME_VERSION_FREE);
    const reasons = await this.transact([...counters, this.job(update, move.jobId)]);
    if (!reasons) return TakeOutcome.Taken;
    if (failedCondition(reasons[counters.length])) return TakeOutcome.Stale;
    return missingGate(reasons.slice(0, counters.length)) ? TakeOutcome.NoPool : TakeOutcome.Full;
  }

  async free(demand: Demand, move: Move, now: number): Promise<boolean> {
    const reasons = await this.transact([...this.counters(exchange(demand, undefined)), this.holding(demand.pool, move, now, 'free')]);
    return reasons === undefined;
  }

  async freeOverLimit(demand: Demand, overGate: string, move: Move, now: number): Promise<boolean> {
    if (!gatesOf(demand).includes(overGate)) throw new Error(`${overGate} is not a limit of job ${move.jobId}`);
    const counters = this.counters(exchange(demand, undefined), overGate);
    const reasons = await this.transact([...counters, this.holding(demand.pool, move, now, 'free')]);
    return reasons === undefined;
  }

  async claim(demand: Demand, move: Move, now: number): Promise<ClaimOutcome> {
    const update = moveUpdate(move, now, 'keep', this.options.retentionDays, SAME_VERSION_RESERVED);
    update.ExpressionAttributeValues[':pool'] = demand.pool;
    update.ExpressionAttributeValues[':reserved'] = JobState.Reserved;
    const checks = gatesOf(demand).map((gate) => this.counterCheck(gate));
    const reasons = await this.transact([...checks, this.job(update, move.jobId)]);
    if (!reasons) return ClaimOutcome.Claimed;
    return failedCondition(reasons[checks.length]) ? ClaimOutcome.Stale : ClaimOutcome.OverLimit;
  }

  async pass(from: Demand, move: Move, to: Receiver, now: number): Promise<PassOutcome> {
    if (move.jobId === to.jobId) throw new Error(`cannot pass a slot from job ${to.jobId} to itself`);
    const counters = this.counters(exchange(from, to.demand));
    const reasons = await this.transact([
      ...counters,
      this.holding(from.pool, move, now, 'free'),
      this.receiving(to, now),
      ...this.waiterGone(to),
    ]);
    if (!reasons) return PassOutcome.Passed;
    if (failedCondition(reasons[counters.length])) return PassOutcome.Stale;
    const target = reasons[counters.length + 1];
    if (failedCondition(target)) return stillWaiting(target) ? PassOutcome.TargetGone : PassOutcome.TargetDone;
    return PassOutcome.OverLimit;
  }

  async reserve(to: Receiver, now: number): Promise<ReserveOutcome> {
    const counters = this.counters(exchange(undefined, to.demand));
    const reasons = await this.transact([...counters, this.receiving(to, now), ...this.waiterGone(to)]);
    if (!reasons) return ReserveOutcome.Reserved;
    const target = reasons[counters.length];
    if (failedCondition(target)) return stillWaiting(target) ? ReserveOutcome.TargetGone : ReserveOutcome.TargetDone;
    return missingGate(reasons.slice(0, counters.length)) ? ReserveOutcome.NoPool : ReserveOutcome.Full;
  }

  async addWaiter(waiter: Waiter): Promise<void> {
    await this.doc.send(new PutCommand({ TableName: this.tableName, Item: waiterItem(waiter, waiterGate(waiter)) }));
  }

  async moveWaiter(waiter: Waiter, toGate: string): Promise<boolean> {
    const fromGate = waiterGate(waiter);
    if (fromGate === toGate) return true;
    const reasons = await this.transact([
      { Delete: { TableName: this.tableName, Key: waiterKey(fromGate, waiter.waitKey), ConditionExpression: GATE_EXISTS } },
      { Put: { TableName: this.tableName, Item: waiterItem(waiter, toGate) } },
    ]);
    return reasons === undefined;
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

  async fairRank(pool: string, tenant: string): Promise<number> {
    // The pool's round need not be exact: a stale read only lets a returning tenant in a round or two early or late.
    const { Item } = await this.doc.send(new GetCommand({ TableName: this.tableName, Key: poolKey(pool) }));
    const next = Number((Item as PoolItem | undefined)?.round ?? 0) + 1;
    const raised = await applied(
      this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: tenantKey(pool, tenant),
          UpdateExpression: 'SET lastRound = :next',
          ConditionExpression: TENANT_BEHIND,
          ExpressionAttributeValues: { ':next': next },
        }),
      ),
    );
    if (raised) return next;
    // The tenant is ahead of the pool (it has jobs waiting already): its next job goes one round after its last.
    const { Attributes } = await this.doc.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: tenantKey(pool, tenant),
        UpdateExpression: 'ADD lastRound :one',
        ExpressionAttributeValues: { ':one': 1 },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    return Number(Attributes?.lastRound);
  }

  async advanceRound(pool: string, rank: number): Promise<void> {
    try {
      await this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: poolKey(pool),
          UpdateExpression: 'SET round = :rank',
          ConditionExpression: ROUND_BEHIND,
          ExpressionAttributeValues: { ':rank': rank },
        }),
      );
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error; // another job of a later round was let in first
    }
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

  /**
   * The counter writes of a slot change, one per gate (ALL_OLD on failure tells a full gate from a missing one). A
   * guarded change of 0 only checks the gate is within its limit. `overGate`, if given, must be over its limit.
   */
  private counters(changes: GateChange[], overGate?: string): TransactItem[] {
    return changes.map(({ gate, delta, guarded }) => {
      if (guarded && delta === 0 && gate !== overGate) return this.counterCheck(gate);
      const condition = gate === overGate ? GATE_OVER_LIMIT : guarded ? GATE_HAS_ROOM : GATE_EXISTS;
      return {
        Update: {
          TableName: this.tableName,
          Key: poolKey(gate),
          UpdateExpression: 'ADD inUse :delta, room :minusDelta',
          ConditionExpression: condition,
          ExpressionAttributeValues: { ':delta': delta, ':minusDelta': -delta, ...(gate === overGate && { ':zero': 0 }) },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
      };
    });
  }

  /** The gate exists and is not over its limit (checked, not written). */
  private counterCheck(gate: string): TransactItem {
    return {
      ConditionCheck: {
        TableName: this.tableName,
        Key: poolKey(gate),
        ConditionExpression: GATE_WITHIN_LIMIT,
        ExpressionAttributeValues: { ':zero': 0 },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
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
  private receiving(to: Receiver, now: number): TransactItem {
    return {
      Update: {
        TableName: this.tableName,
        Key: jobKey(to.jobId),
        UpdateExpression: 'SET #state = :reserved, holderPool = :pool, leaseSince = :now, updatedAt = :now, #version = #version + :one',
        ConditionExpression: ADMITTABLE,
        // Why it is not admittable tells whether its waiter item is stale, without reading the job again.
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        ExpressionAttributeNames: { '#state': 'state', '#version': 'version' },
        ExpressionAttributeValues: {
          ':reserved': JobState.Reserved,
          ':queued': JobState.Queued,
          ':waiting': JobState.Waiting,
          ':pool': to.demand.pool,
          ':now': now,
          ':one': 1,
        },
      },
    };
  }

  /** The waiter item of a job receiving a slot, deleted in the same transaction (none when no wait key is given). */
  private waiterGone(to: Receiver): TransactItem[] {
    if (to.waitKey === undefined) return [];
    return [{ Delete: { TableName: this.tableName, Key: waiterKey(to.gate ?? to.demand.pool, to.waitKey) } }];
  }

  private job(update: UpdateParts, jobId: string): TransactItem {
    return { Update: { TableName: this.tableName, Key: jobKey(jobId), ...update } };
  }

  private async register(pool: string): Promise<void> {
    await this.doc.send(new PutCommand({ TableName: this.tableName, Item: poolRegistryKey(pool) }));
  }
}

function toWaiter(gate: string, item: WaiterItem): Waiter {
  const pool = item.pool ?? gate;
  return {
    pool,
    gate,
    demand: { pool, keys: item.keys ?? [], units: item.units ?? 1 },
    jobId: item.jobId,
    kind: item.kind,
    waitKey: item.sk.slice(WAIT_PREFIX.length),
    body: item.body,
    since: item.since,
  };
}

function waiterItem(waiter: Waiter, gate: string): Record<string, unknown> {
  const demand = waiterDemand(waiter);
  return {
    ...waiterKey(gate, waiter.waitKey),
    jobId: waiter.jobId,
    kind: waiter.kind,
    body: waiter.body,
    since: waiter.since,
    pool: waiter.pool,
    keys: [...demand.keys],
    units: demand.units,
  };
}

/**
 * A receiving job whose condition failed, read from its ALL_OLD: still on its way in (reserved by another hand-off, or
 * queued or waiting while holding a slot), or past waiting (or unknown: no item), its waiter item then stale.
 */
function stillWaiting(reason: CancellationReason | undefined): boolean {
  // The document client does not unmarshall an error's items: the attribute is { S: 'reserved' }.
  const attribute = reason?.Item?.state as { S?: string } | string | undefined;
  const state = typeof attribute === 'object' ? attribute.S : attribute;
  return state === JobState.Reserved || state === JobState.Queued || state === JobState.Waiting;
}

/** A counter whose condition failed and that has no item: the gate does not exist. */
function missingGate(reasons: CancellationReason[]): boolean {
  return reasons.some((reason) => failedCondition(reason) && !reason.Item);
}
