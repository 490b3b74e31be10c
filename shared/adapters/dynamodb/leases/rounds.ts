import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ROUND_BEHIND, TENANT_BEHIND } from '../conditions';
import { applied, isConditionalCheckFailed } from '../errors';
import { poolKey, tenantKey } from '../keys';
import type { PoolItem } from './counterItem';
import type { LeaseTable } from './leaseTable';

/**
 * Fair turns: a tenant's round (pk POOL#<pool>, sk TENANT#<fairness key>: the round of its last waiting job) and the
 * pool's current round (`round` on its counter item, the round of the last fair job let in).
 */
export class FairRounds {
  constructor(private readonly table: LeaseTable) {}

  async fairRank(pool: string, tenant: string): Promise<number> {
    // The pool's round need not be exact: a stale read only lets a returning tenant in a round or two early or late.
    const { Item } = await this.table.send(new GetCommand({ TableName: this.table.tableName, Key: poolKey(pool) }));
    // The round being let in now: a tenant behind it (new, or back after a pause) joins it, and goes before the other
    // tenants' jobs of later rounds; a tenant with jobs waiting already goes one round after its last.
    const next = Number((Item as PoolItem | undefined)?.round ?? 0);
    const raised = await applied(
      this.table.send(
        new UpdateCommand({
          TableName: this.table.tableName,
          Key: tenantKey(pool, tenant),
          UpdateExpression: 'SET lastRound = :next',
          ConditionExpression: TENANT_BEHIND,
          ExpressionAttributeValues: { ':next': next },
        }),
      ),
    );
    if (raised) return next;
    // The tenant is ahead of the pool (it has jobs waiting already): its next job goes one round after its last.
    const { Attributes } = await this.table.send(
      new UpdateCommand({
        TableName: this.table.tableName,
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
      await this.table.send(
        new UpdateCommand({
          TableName: this.table.tableName,
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
}
