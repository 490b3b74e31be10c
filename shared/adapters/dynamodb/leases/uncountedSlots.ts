import { uncountedHolderKey } from '../../../domain/unlimited';
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Demand } from '../../../domain/limits';
import { type JobRecord, type Lease, type Move, moved } from '../../../ports/jobLedger';
import { TakeOutcome, type TakeResult } from '../../../ports/leaseStore';
import { IS_NEW, SAME_VERSION_FREE, SAME_VERSION_HOLDING_UNCOUNTED } from '../conditions';
import { applied } from '../errors';
import { moveUpdate, toJobItem } from '../jobItem';
import { jobKey } from '../keys';
import type { LeaseTable } from './leaseTable';

/**
 * Slots no counter counts: a job of an unlimited pool with no start rate and no keyed limit (shared/domain/unlimited.ts).
 * Its take and its release are one conditional write of its own record each (no transaction, no item another job
 * writes), fenced by the version read as every move is; the slot is marked `leaseUncounted`, and its release requires
 * the mark, so no release of it ever moves a counter and no counted slot is ever given back here. Its holders index
 * key is its shard of the pool (`<pool>/<shard>`, shared/domain/unlimited.ts): no index partition is every job's either.
 */
export class UncountedSlots {
  constructor(private readonly table: LeaseTable) {}

  async take(demand: Demand, move: Move, now: number, create?: JobRecord): Promise<TakeResult> {
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

  async free(demand: Demand, move: Move, now: number): Promise<boolean> {
    const update = moveUpdate(move, now, 'free', this.table.retentionDays, SAME_VERSION_HOLDING_UNCOUNTED);
    update.ExpressionAttributeValues[':pool'] = uncountedHolderKey(demand.pool, move.jobId);
    update.ExpressionAttributeValues[':uncounted'] = true;
    return applied(this.table.send(new UpdateCommand({ TableName: this.table.tableName, Key: jobKey(move.jobId), ...update })));
  }
}
