import { GetCommand, paginateQuery, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { PoolSnapshot } from '../../../domain/pool';
import { ContentionError } from '../../../errors';
import { UNLIMITED, UNLIMITED_COUNTER_LIMIT } from '../../../domain/unlimited';
import { ADOPTING_SINCE, ADOPTION_SETTLED, COUNTER_ADOPTING, COUNTER_LIMITED, COUNTER_UNLIMITED, GATE_KNOWN, IS_NEW } from '../conditions';
import { CONTENTION_TRIES, isContention } from '../contention';
import { applied } from '../errors';
import { POOL_REGISTRY_PK, poolKey, poolRegistryKey } from '../keys';
import { type PoolItem, rateOf, snapshotOf } from './counterItem';
import type { LeaseTable } from './leaseTable';
import type { RateBeliefs } from './rateBookings';

/**
 * Limits: each gate (a pool, or a keyed limit) is a small counter item (pk POOL#<gate>, sk POOL: limit, inUse, room),
 * listed in the pool registry (pk POOLS). An item's size never depends on the limit, so neither does any write's cost.
 * Slot changes move these counters (./slots.ts); start rates live on them too (./rateBookings.ts).
 */
export class Counters {
  constructor(
    private readonly table: LeaseTable,
    private readonly rates: RateBeliefs,
  ) {}

  async getPool(pool: string): Promise<PoolSnapshot | undefined> {
    const { Item } = await this.table.send(new GetCommand({ TableName: this.table.tableName, Key: poolKey(pool), ConsistentRead: true }));
    if (!Item) return undefined;
    const item = Item as PoolItem;
    this.rates.set(pool, rateOf(item));
    return snapshotOf(pool, item);
  }

  async listPools(): Promise<string[]> {
    const names: string[] = [];
    const pages = paginateQuery(
      { client: this.table.doc },
      { TableName: this.table.tableName, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': POOL_REGISTRY_PK } },
    );
    for await (const page of pages) for (const item of page.Items ?? []) names.push(String(item.sk));
    return names;
  }

  async createPool(pool: string, limit: number, intervalMs?: number, adoptingSince?: number): Promise<boolean> {
    const rate = intervalMs === undefined ? {} : { intervalMs, tat: 0 };
    // Read first: a burst of first jobs all find the gate missing at once, and one creates it; the others' puts then
    // meet the transactions taking slots from it, and a write meeting a transaction is refused. A read is not.
    const created =
      (await this.getPool(pool)) === undefined &&
      (await applied(
        this.table.send(
          new PutCommand({
            TableName: this.table.tableName,
            Item: {
              ...poolKey(pool),
              limit,
              inUse: 0,
              room: limit,
              ...rate,
              ...(limit === UNLIMITED_COUNTER_LIMIT && { unlimited: true }),
              ...(adoptingSince !== undefined && { adopting: true, adoptingSince }),
            },
            ConditionExpression: IS_NEW,
          }),
        ),
      ).catch((error: unknown) => {
        // Still refused for a transaction after the tries: the gate exists (the transactions that hold its item take
        // and free its slots), or a take that found it missing holds it and the caller tries again.
        if (isContention(error)) return false;
        throw error;
      }));
    // Registered on both paths: a creation that died before this write is listed the next time the pool is used.
    await this.register(pool);
    return created;
  }

  async setLimit(pool: string, limit: number, intervalMsIfNew?: number): Promise<void> {
    // room follows the limit in the same write (room = limit - inUse), so a condition on room sees the new limit.
    for (let passes = 0; ;) {
      const set = await applied(
        this.table.send(
          new UpdateCommand({
            TableName: this.table.tableName,
            Key: poolKey(pool),
            UpdateExpression: 'SET #limit = :limit, room = :limit - inUse',
            ConditionExpression: GATE_KNOWN,
            ExpressionAttributeNames: { '#limit': 'limit' },
            ExpressionAttributeValues: { ':limit': limit },
          }),
        ),
      );
      if (set || (await this.createPool(pool, limit, intervalMsIfNew))) break;
      // Neither: the gate was created meanwhile (its update goes through next time), or a put kept meeting takes.
      if (++passes >= CONTENTION_TRIES) throw new ContentionError(`the limit of ${pool} could not be set: its item is busy`);
    }
    await this.register(pool);
  }

  async switchUnlimited(pool: string, to: typeof UNLIMITED | number, now: number, settleMs: number): Promise<boolean> {
    const limit = to === UNLIMITED ? UNLIMITED_COUNTER_LIMIT : to;
    return applied(
      this.table.send(
        new UpdateCommand({
          TableName: this.table.tableName,
          Key: poolKey(pool),
          // room follows the limit in the same write, as setLimit's. Limited again: adopting (admitting nothing) since
          // now, until the reconciler has counted the slots taken while the pool was unlimited (shared/domain/unlimited.ts).
          UpdateExpression:
            to === UNLIMITED
              ? 'SET #limit = :limit, room = :limit - inUse, unlimited = :true REMOVE adopting, adoptingSince'
              : 'SET #limit = :limit, room = :limit - inUse, adopting = :true, adoptingSince = :now REMOVE unlimited',
          ConditionExpression: to === UNLIMITED ? `${COUNTER_LIMITED} AND ${ADOPTION_SETTLED}` : COUNTER_UNLIMITED,
          ExpressionAttributeNames: { '#limit': 'limit' },
          ExpressionAttributeValues: {
            ':limit': limit,
            ':unlimitedLimit': UNLIMITED_COUNTER_LIMIT,
            ':true': true,
            ...(to === UNLIMITED ? { ':settledBefore': now - settleMs } : { ':now': now }),
          },
        }),
      ),
    );
  }

  async endAdopting(pool: string, since?: number): Promise<boolean> {
    return applied(
      this.table.send(
        new UpdateCommand({
          TableName: this.table.tableName,
          Key: poolKey(pool),
          UpdateExpression: 'REMOVE adopting, adoptingSince',
          ConditionExpression: since === undefined ? COUNTER_ADOPTING : `${COUNTER_ADOPTING} AND ${ADOPTING_SINCE}`,
          ...(since !== undefined && { ExpressionAttributeValues: { ':since': since } }),
        }),
      ),
    );
  }

  private async register(pool: string): Promise<void> {
    await this.table.send(new PutCommand({ TableName: this.table.tableName, Item: poolRegistryKey(pool) }));
  }
}
