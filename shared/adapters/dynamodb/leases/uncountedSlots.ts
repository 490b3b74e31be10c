import { uncountedHolderKey } from '../../../domain/unlimited';
import { paginateQuery, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Demand } from '../../../domain/limits';
import { type JobRecord, type Lease, type Move, moved } from '../../../ports/jobLedger';
import { AdoptOutcome, TakeOutcome, type TakeResult } from '../../../ports/leaseStore';
import { GATE_EXISTS, HOLDING_UNCOUNTED_AT, IS_NEW, SAME_VERSION_FREE, SAME_VERSION_HOLDING_UNCOUNTED } from '../conditions';
import { applied, failedCondition } from '../errors';
import { moveUpdate, toJobItem } from '../jobItem';
import { jobKey, poolKey, UNCOUNTED_POOLS_PK, uncountedPoolKey } from '../keys';
import type { LeaseTable } from './leaseTable';

/**
 * Slots no counter counts: a job of an unlimited pool with no start rate and no keyed limit (shared/domain/unlimited.ts).
 * Its take and its release are one conditional write of its own record each (no transaction, no item another job
 * writes), fenced by the version read as every move is; the slot is marked `leaseUncounted`, and its release requires
 * the mark, so no release of it ever moves a counter and no counted slot is ever given back here. Its holders index
 * key is its shard of the pool (`<pool>/<shard>`, shared/domain/unlimited.ts): no index partition is every job's either.
 *
 * Before its first uncounted slot of a pool, an instance marks the pool (pk UNCOUNTED, sk <pool>: one idempotent put,
 * never removed): the reconciler visits the shards of every marked pool, so a slot taken while the pool was unlimited
 * is still checked after the pool is limited again (the configuration no longer names it unlimited), even if the
 * switch came before any reconcile.
 *
 * A pool limited again has its uncounted slots counted on its counter (`adopt`, by the reconciler): one transaction per
 * slot, the record's slot made a counted one of the pool and the counter's units added, with no room condition.
 */
export class UncountedSlots {
  /** Pools this instance has marked (or read marked): the mark is written once per instance and pool. */
  private readonly marked = new Set<string>();

  constructor(private readonly table: LeaseTable) {}

  async pools(): Promise<string[]> {
    const names: string[] = [];
    const pages = paginateQuery(
      { client: this.table.doc },
      {
        TableName: this.table.tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': UNCOUNTED_POOLS_PK },
        // Strongly consistent (one partition of the table, no index): a mark written before this read is in it, so a
        // counter created now from configuration is created adopting if the pool ever took an uncounted slot
        // (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/HowItWorks.ReadConsistency.html).
        ConsistentRead: true,
      },
    );
    for await (const page of pages) for (const item of page.Items ?? []) names.push(String(item.sk));
    for (const name of names) this.marked.add(name);
    return names;
  }

  async mark(pool: string): Promise<void> {
    if (this.marked.has(pool)) return;
    await this.table.send(new PutCommand({ TableName: this.table.tableName, Item: uncountedPoolKey(pool) }));
    this.marked.add(pool);
  }

  async take(demand: Demand, move: Move, now: number, create?: JobRecord): Promise<TakeResult> {
    // The mark first: a slot written without it could be missed by the reconciler once the pool is limited again.
    await this.mark(demand.pool);
    const lease: Lease = { pool: demand.pool, since: now, uncounted: true };
    const written = create
      ? this.table.send(
          new PutCommand({
            TableName: this.table.tableName,
            Item: toJobItem({ ...moved(create, move, now), lease }),
            ConditionExpression: IS_NEW,
          }),
        )
      : this.table.send(
          new UpdateCommand({
            TableName: this.table.tableName,
            Key: jobKey(move.jobId),
            ...moveUpdate(move, now, { take: lease }, this.table.retentionDays, SAME_VERSION_FREE),
          }),
        );
    return { outcome: (await applied(written)) ? TakeOutcome.Taken : TakeOutcome.Stale };
  }

  async adopt(pool: string, jobId: string, units: number): Promise<AdoptOutcome> {
    const reasons = await this.table.transact([
      {
        Update: {
          TableName: this.table.tableName,
          Key: jobKey(jobId),
          // Listed under the pool from now on (holders index), as a slot a counted take wrote.
          UpdateExpression: 'SET holderPool = :pool REMOVE leaseUncounted',
          ConditionExpression: HOLDING_UNCOUNTED_AT,
          ExpressionAttributeValues: { ':shard': uncountedHolderKey(pool, jobId), ':uncounted': true, ':pool': pool },
        },
      },
      {
        Update: {
          TableName: this.table.tableName,
          Key: poolKey(pool),
          // No room condition: a slot held already is counted, even over the limit (as a lowered limit leaves it).
          UpdateExpression: 'ADD inUse :units, room :minusUnits',
          ConditionExpression: GATE_EXISTS,
          ExpressionAttributeValues: { ':units': units, ':minusUnits': -units },
        },
      },
    ]);
    if (!reasons) return AdoptOutcome.Adopted;
    return failedCondition(reasons[0]) ? AdoptOutcome.NotHeld : AdoptOutcome.NoPool;
  }

  async free(demand: Demand, move: Move, now: number): Promise<boolean> {
    const update = moveUpdate(move, now, 'free', this.table.retentionDays, SAME_VERSION_HOLDING_UNCOUNTED);
    update.ExpressionAttributeValues[':pool'] = uncountedHolderKey(demand.pool, move.jobId);
    update.ExpressionAttributeValues[':uncounted'] = true;
    return applied(this.table.send(new UpdateCommand({ TableName: this.table.tableName, Key: jobKey(move.jobId), ...update })));
  }
}
