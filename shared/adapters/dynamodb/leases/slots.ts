import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { JobState } from '../../../domain/jobState';
import { type Demand, exchange, gatesOf } from '../../../domain/limits';
import { type JobRecord, type Move, moved } from '../../../ports/jobLedger';
import {
  ClaimOutcome,
  type HolderPage,
  PassOutcome,
  type Receiver,
  ReserveOutcome,
  TakeOutcome,
  type TakeResult,
} from '../../../ports/leaseStore';
import type { JobKind } from '../../../kinds/registry';
import { ADMITTABLE, SAME_VERSION_FREE, SAME_VERSION_HOLDING_COUNTED, SAME_VERSION_RESERVED } from '../conditions';
import { type CancellationReason, failedCondition } from '../errors';
import { moveUpdate, type UpdateParts } from '../jobItem';
import { jobKey, waiterKey } from '../keys';
import { missingGate, type PoolItem, snapshotOf, unmarshalled } from './counterItem';
import type { CounterWrites } from './counterWrites';
import type { LeaseTable, TransactItem } from './leaseTable';

/**
 * Slots: a slot is a lease on the holding job's own record (holderPool, leaseSince), taking the job's units from every
 * gate of its demand. Every change of a slot moves the job record and all the counters it touches in one transaction
 * (./counterWrites.ts), fenced by the version of the record read; a job receiving a slot has its waiter item deleted
 * in the same transaction.
 */

/** The sparse index of job records holding a slot (serverless.yml: SluiceTable, GlobalSecondaryIndexes). */
export const HOLDERS_INDEX = 'holders';

export class Slots {
  constructor(
    private readonly table: LeaseTable,
    private readonly writes: CounterWrites,
  ) {}

  async holders(pool: string, options: { after?: string; max?: number } = {}): Promise<HolderPage> {
    const { Items, LastEvaluatedKey } = await this.table.send(
      new QueryCommand({
        TableName: this.table.tableName,
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

  async take(demand: Demand, move: Move, now: number, create?: JobRecord): Promise<TakeResult> {
    const update = moveUpdate(move, now, { take: { pool: demand.pool, since: now } }, this.table.retentionDays, SAME_VERSION_FREE);
    const taken = (startAt: number | undefined): JobRecord => ({
      ...moved(create!, move, now),
      lease: { pool: demand.pool, since: now },
      ...(startAt !== undefined && { startAt }),
    });
    const result = await this.writes.admit(exchange(undefined, demand), now, (startAt) => [
      create ? this.table.newJob(taken(startAt)) : this.table.job(withStartAt(update, startAt), move.jobId),
    ]);
    if (result === 'rate-limited') return { outcome: TakeOutcome.RateLimited };
    if ('contended' in result) return { outcome: TakeOutcome.Contended, gate: result.contended };
    const { reasons, counters, startAt } = result;
    if (!reasons) return { outcome: TakeOutcome.Taken, ...(startAt !== undefined && { startAt }) };
    if (failedCondition(reasons[counters])) return { outcome: TakeOutcome.Stale };
    const outcome = missingGate(reasons.slice(0, counters)) ? TakeOutcome.NoPool : TakeOutcome.Full;
    // One gate: its ALL_OLD is why (no item: it does not exist), so the caller need not read it.
    if (gatesOf(demand).length !== 1 || !failedCondition(reasons[0])) return { outcome };
    const item = reasons[0]!.Item ? (unmarshalled(reasons[0]!.Item) as unknown as PoolItem) : undefined;
    return { outcome, seen: { counter: item && snapshotOf(demand.pool, item) } };
  }

  async free(demand: Demand, move: Move, now: number): Promise<boolean> {
    const reasons = await this.table.transact([
      ...this.writes.counters(exchange(demand, undefined)),
      this.holding(demand.pool, move, now, 'free'),
    ]);
    return reasons === undefined;
  }

  async freeOverLimit(demand: Demand, overGate: string, move: Move, now: number): Promise<boolean> {
    if (!gatesOf(demand).includes(overGate)) throw new Error(`${overGate} is not a limit of job ${move.jobId}`);
    const counters = this.writes.counters(exchange(demand, undefined), overGate);
    const reasons = await this.table.transact([...counters, this.holding(demand.pool, move, now, 'free')]);
    return reasons === undefined;
  }

  async claim(demand: Demand, move: Move, now: number): Promise<ClaimOutcome> {
    const update = moveUpdate(move, now, 'keep', this.table.retentionDays, SAME_VERSION_RESERVED);
    update.ExpressionAttributeValues[':pool'] = demand.pool;
    update.ExpressionAttributeValues[':reserved'] = JobState.Reserved;
    const checks = gatesOf(demand).map((gate) => this.writes.counterCheck(gate, false, demand.limited && gate === demand.pool));
    const reasons = await this.table.transact([...checks, this.table.job(update, move.jobId)]);
    if (!reasons) return ClaimOutcome.Claimed;
    return failedCondition(reasons[checks.length]) ? ClaimOutcome.Stale : ClaimOutcome.OverLimit;
  }

  async pass(from: Demand, move: Move, to: Receiver, now: number): Promise<PassOutcome> {
    if (move.jobId === to.jobId) throw new Error(`cannot pass a slot from job ${to.jobId} to itself`);
    const result = await this.writes.admit(exchange(from, to.demand), now, (startAt) => [
      this.holding(from.pool, move, now, 'free'),
      this.receiving(to, now, startAt),
      ...this.waiterGone(to),
    ]);
    if (result === 'rate-limited') return PassOutcome.RateLimited;
    if ('contended' in result) return PassOutcome.Contended;
    const { reasons, counters } = result;
    if (!reasons) return PassOutcome.Passed;
    if (failedCondition(reasons[counters])) return PassOutcome.Stale;
    const target = reasons[counters + 1];
    if (failedCondition(target)) return stillWaiting(target) ? PassOutcome.TargetGone : PassOutcome.TargetDone;
    return PassOutcome.OverLimit;
  }

  async reserve(to: Receiver, now: number): Promise<ReserveOutcome> {
    const result = await this.writes.admit(exchange(undefined, to.demand), now, (startAt) => [
      this.receiving(to, now, startAt),
      ...this.waiterGone(to),
    ]);
    if (result === 'rate-limited') return ReserveOutcome.RateLimited;
    if ('contended' in result) return ReserveOutcome.Contended;
    const { reasons, counters } = result;
    if (!reasons) return ReserveOutcome.Reserved;
    const target = reasons[counters];
    if (failedCondition(target)) return stillWaiting(target) ? ReserveOutcome.TargetGone : ReserveOutcome.TargetDone;
    return missingGate(reasons.slice(0, counters)) ? ReserveOutcome.NoPool : ReserveOutcome.Full;
  }

  /** A version-fenced move of a job that holds a counted slot of `pool` (an uncounted one is ./uncountedSlots.ts's). */
  private holding(pool: string, move: Move, now: number, lease: 'free' | 'keep'): TransactItem {
    const update = moveUpdate(move, now, lease, this.table.retentionDays, SAME_VERSION_HOLDING_COUNTED);
    update.ExpressionAttributeValues[':pool'] = pool;
    return this.table.job(update, move.jobId);
  }

  /**
   * A queued or waiting job receiving a slot: it becomes reserved (row `receive`), or starting under the attempt of the
   * releaser that starts it (row `receiveStarting`: the claim's patch in this same write; the claim's check of every
   * counter is the receive's own). firstStartAt is kept if the job has one (its retry budget counts from its first start).
   */
  private receiving(to: Receiver, now: number, startAt?: number): TransactItem {
    const state = to.starting
      ? 'SET #state = :starting, attempt = :attempt, claimableAt = :claimableAt, startRequested = :true, firstStartAt = if_not_exists(firstStartAt, :now), '
      : 'SET #state = :reserved, ';
    return {
      Update: {
        TableName: this.table.tableName,
        Key: jobKey(to.jobId),
        UpdateExpression: `${state}holderPool = :pool, leaseSince = :now, updatedAt = :now, #version = #version + :one${startAt === undefined ? '' : ', startAt = :startAt'}`,
        ConditionExpression: ADMITTABLE,
        // Why it is not admittable tells whether its waiter item is stale, without reading the job again.
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        ExpressionAttributeNames: { '#state': 'state', '#version': 'version' },
        ExpressionAttributeValues: {
          ':queued': JobState.Queued,
          ':waiting': JobState.Waiting,
          ':pool': to.demand.pool,
          ':now': now,
          ':one': 1,
          ...(to.starting
            ? { ':starting': JobState.Starting, ':attempt': to.starting.attempt, ':claimableAt': to.starting.claimableAt, ':true': true }
            : { ':reserved': JobState.Reserved }),
          ...(startAt !== undefined && { ':startAt': startAt }),
        },
      },
    };
  }

  /** The waiter item of a job receiving a slot, deleted in the same transaction (none when no wait key is given). */
  private waiterGone(to: Receiver): TransactItem[] {
    if (to.waitKey === undefined) return [];
    return [{ Delete: { TableName: this.table.tableName, Key: waiterKey(to.gate ?? to.demand.pool, to.waitKey) } }];
  }
}

/**
 * A receiving job whose condition failed, read from its ALL_OLD: still on its way in (reserved by another hand-off, or
 * queued or waiting while holding a slot), or holding a slot (let in by another hand-off, or taken: it may come back
 * to waiting under the same wait key, so its waiter item is not to be deleted now), or else past waiting with no slot
 * (or unknown: no item), its waiter item then stale.
 */
function stillWaiting(reason: CancellationReason | undefined): boolean {
  // The document client does not unmarshall an error's items: the attribute is { S: 'reserved' }.
  const item = reason?.Item ? unmarshalled(reason.Item) : undefined;
  const state = item?.state;
  return state === JobState.Reserved || state === JobState.Queued || state === JobState.Waiting || item?.holderPool !== undefined;
}

/** A move's update that also writes the booked start time, if any. */
function withStartAt(update: UpdateParts, startAt: number | undefined): UpdateParts {
  if (startAt === undefined) return update;
  return {
    ...update,
    UpdateExpression: update.UpdateExpression.replace(/^SET /, 'SET startAt = :startAt, '),
    ExpressionAttributeValues: { ...update.ExpressionAttributeValues, ':startAt': startAt },
  };
}
