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
import { JobState } from '../../domain/jobState';
import { type Demand, exchange, type GateChange, gatesOf } from '../../domain/limits';
import type { PoolSnapshot } from '../../domain/pool';
import { book, type RateState } from '../../domain/rate';
import { type Waiter, waiterDemand, waiterGate } from '../../domain/waiting';
import { type JobRecord, type Move, moved } from '../../ports/jobLedger';
import {
  ClaimOutcome,
  type HolderPage,
  type LeaseStore,
  PassOutcome,
  type Receiver,
  ReserveOutcome,
  TakeOutcome,
  type TakeResult,
} from '../../ports/leaseStore';
import {
  ADMITTABLE,
  GATE_EXISTS,
  GATE_HAS_ROOM,
  GATE_KNOWN,
  GATE_OVER_LIMIT,
  GATE_WITHIN_LIMIT,
  IS_NEW,
  NOT_RATED,
  RATE_AS_READ,
  TICK_NOT_DUE,
  ROUND_BEHIND,
  SAME_VERSION_FREE,
  SAME_VERSION_HOLDING,
  SAME_VERSION_RESERVED,
  TENANT_BEHIND,
} from './conditions';
import {
  type Backoff,
  CONTENTION_REASONS,
  CONTENTION_TRIES,
  contentionDelayMs,
  contentionRetrying,
  isContention,
  REAL_BACKOFF,
  type Send,
} from './contention';
import { applied, type CancellationReason, cancellationReasons, failedCondition, isConditionalCheckFailed } from './errors';
import { ContentionError } from '../../errors';
import { moveUpdate, toJobItem, type UpdateParts } from './jobItem';
import { jobKey, POOL_REGISTRY_PK, poolKey, poolRegistryKey, tenantKey, WAIT_PREFIX, waiterKey } from './keys';
import type { JobKind } from '../../kinds/registry';

/** The sparse index of job records holding a slot (serverless.yml: SluiceTable, GlobalSecondaryIndexes). */
export const HOLDERS_INDEX = 'holders';

/**
 * What a cancelled admission's reasons say about its counters (each failed counter's ALL_OLD read, beliefs about rates
 * corrected on the way):
 * - Outcome: a condition that is the caller's answer failed: a gate missing, or without room, or an item other than
 *   the counters (the job moved, the receiver is gone);
 * - Belief: every failed counter had room, and a rate this instance did not know of (or one removed): try again now;
 * - Fence: every failed counter had room, and its `tat` had moved since it was read: another booking won the race.
 *   Contention, not fullness: back off and try again; after CONTENTION_TRIES, the admission is Contended.
 */
const Verdict = { Outcome: 'outcome', Belief: 'belief', Fence: 'fence' } as const;
type Verdict = (typeof Verdict)[keyof typeof Verdict];

interface PoolItem {
  limit: number;
  inUse: number;
  room: number;
  /** fairness: the round of the last fair job let in */
  round?: number;
  /** start rate: ms between starts, and the earliest time the next start may be booked */
  intervalMs?: number;
  tat?: number;
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
  /** How to wait between tries that met contention (real timers and jitter by default). */
  backoff?: Backoff;
}

/** An admission that never got through: every try lost the race for `gate`'s counter. */
interface Contended {
  contended: string;
}

/**
 * Pools as small counter items (pk POOL#<pool>, sk POOL: limit, inUse) and slots as leases on job records, changed
 * together by TransactWriteItems. An item's size never depends on the limit, so neither does any write's cost.
 */
export class DynamoLeaseStore implements LeaseStore {
  /**
   * What this instance believes of each gate's start rate: its state (with the `tat` last seen), null for none, absent
   * for not known (as none). A belief is never trusted: an admission to a gate believed to have no rate carries
   * NOT_RATED, one to a rated gate RATE_AS_READ, so a wrong belief fails the write, and its ALL_OLD corrects it.
   */
  private readonly rates = new Map<string, RateState | null>();
  /** Every request goes through it: contention (a transaction on the item) is tried again with backoff. */
  private readonly send: Send;
  private readonly backoff: Backoff;

  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly options: LeaseStoreOptions = { retentionDays: 30 },
  ) {
    this.backoff = options.backoff ?? REAL_BACKOFF;
    this.send = contentionRetrying(doc, this.backoff);
  }

  async getPool(pool: string): Promise<PoolSnapshot | undefined> {
    const { Item } = await this.send(new GetCommand({ TableName: this.tableName, Key: poolKey(pool), ConsistentRead: true }));
    if (!Item) return undefined;
    const item = Item as PoolItem;
    this.rates.set(pool, rateOf(item));
    return snapshotOf(pool, item);
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

  async createPool(pool: string, limit: number, intervalMs?: number): Promise<boolean> {
    const rate = intervalMs === undefined ? {} : { intervalMs, tat: 0 };
    // Read first: a burst of first jobs all find the gate missing at once, and one creates it; the others' puts then
    // meet the transactions taking slots from it, and a write meeting a transaction is refused. A read is not.
    const created =
      (await this.getPool(pool)) === undefined &&
      (await applied(
        this.send(
          new PutCommand({
            TableName: this.tableName,
            Item: { ...poolKey(pool), limit, inUse: 0, room: limit, ...rate },
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
        this.send(
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
      if (set || (await this.createPool(pool, limit, intervalMsIfNew))) break;
      // Neither: the gate was created meanwhile (its update goes through next time), or a put kept meeting takes.
      if (++passes >= CONTENTION_TRIES) throw new ContentionError(`the limit of ${pool} could not be set: its item is busy`);
    }
    await this.register(pool);
  }

  async setRate(gate: string, intervalMs: number | undefined): Promise<void> {
    await this.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: poolKey(gate),
        ...(intervalMs === undefined
          ? { UpdateExpression: 'REMOVE intervalMs, tat' }
          : {
              UpdateExpression: 'SET intervalMs = :interval, tat = if_not_exists(tat, :zero)',
              ExpressionAttributeValues: { ':interval': intervalMs, ':zero': 0 },
            }),
        ConditionExpression: GATE_KNOWN,
      }),
    );
    this.rates.delete(gate);
  }

  async book(demand: Demand, now: number): Promise<{ startAt: number } | { retryAt: number }> {
    // Every gate of the demand, none changed: a rated one moves its tat (fenced by the one read), an unrated one is
    // checked to be still unrated (a rate set meanwhile fails the write and is learned).
    const changes = gatesOf(demand).map((gate) => ({ gate, delta: 0, guarded: true }));
    for (let tries = 1; ; tries++) {
      const plan = this.plannedStart(changes, now);
      if ('retryAt' in plan) return plan;
      const { startAt } = plan;
      const items = changes.map(({ gate }) => {
        const rate = this.rates.get(gate);
        if (!rate)
          return {
            ConditionCheck: {
              TableName: this.tableName,
              Key: poolKey(gate),
              ConditionExpression: NOT_RATED,
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
            },
          };
        return {
          Update: {
            TableName: this.tableName,
            Key: poolKey(gate),
            UpdateExpression: 'SET tat = :nextTat',
            ConditionExpression: RATE_AS_READ,
            ExpressionAttributeValues: { ':tat': rate.tat, ':nextTat': startAt! + rate.intervalMs },
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
          },
        };
      });
      const reasons = await this.contended(() => this.transact(items), changes);
      if (reasons && 'contended' in reasons)
        throw new ContentionError(`could not book a start on ${reasons.contended}: other bookings kept winning`);
      if (!reasons) {
        this.noteBooked(changes, startAt);
        return { startAt: startAt ?? now };
      }
      const { verdict, gate } = this.judge(changes, reasons, changes.length);
      if (verdict === Verdict.Outcome) throw new Error(`could not book a start on ${gatesOf(demand).join(', ')}: a gate is missing`);
      if (verdict === Verdict.Fence) {
        if (tries >= CONTENTION_TRIES) throw new ContentionError(`could not book a start on ${gate}: other bookings kept winning`);
        await this.backoff.sleep(contentionDelayMs(tries, this.backoff.random()));
      }
    }
  }

  async claimTick(gate: string, at: number, now: number): Promise<boolean> {
    return applied(
      this.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: poolKey(gate),
          UpdateExpression: 'SET tickAt = :at',
          ConditionExpression: TICK_NOT_DUE,
          ExpressionAttributeValues: { ':at': at, ':now': now },
        }),
      ),
    );
  }

  async holders(pool: string, options: { after?: string; max?: number } = {}): Promise<HolderPage> {
    const { Items, LastEvaluatedKey } = await this.send(
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

  async take(demand: Demand, move: Move, now: number, create?: JobRecord): Promise<TakeResult> {
    const update = moveUpdate(move, now, { take: { pool: demand.pool, since: now } }, this.options.retentionDays, SAME_VERSION_FREE);
    const taken = (startAt: number | undefined): JobRecord => ({
      ...moved(create!, move, now),
      lease: { pool: demand.pool, since: now },
      ...(startAt !== undefined && { startAt }),
    });
    const result = await this.admit(exchange(undefined, demand), now, (startAt) => [
      create ? this.newJob(taken(startAt)) : this.job(withStartAt(update, startAt), move.jobId),
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
    const result = await this.admit(exchange(from, to.demand), now, (startAt) => [
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
    const result = await this.admit(exchange(undefined, to.demand), now, (startAt) => [
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

  async addWaiter(waiter: Waiter, create?: JobRecord): Promise<boolean> {
    const put = { TableName: this.tableName, Item: waiterItem(waiter, waiterGate(waiter)) };
    if (!create) {
      await this.send(new PutCommand(put));
      return true;
    }
    return (await this.transact([{ Put: put }, this.newJob(create)])) === undefined;
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
    const { Items } = await this.send(
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
    const { Item } = await this.send(new GetCommand({ TableName: this.tableName, Key: waiterKey(pool, waitKey), ConsistentRead: true }));
    return Item ? toWaiter(pool, Item as WaiterItem) : undefined;
  }

  async removeWaiter(pool: string, waitKey: string): Promise<void> {
    await this.send(new DeleteCommand({ TableName: this.tableName, Key: waiterKey(pool, waitKey) }));
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
    const { Item } = await this.send(new GetCommand({ TableName: this.tableName, Key: poolKey(pool) }));
    // The round being let in now: a tenant behind it (new, or back after a pause) joins it, and goes before the other
    // tenants' jobs of later rounds; a tenant with jobs waiting already goes one round after its last.
    const next = Number((Item as PoolItem | undefined)?.round ?? 0);
    const raised = await applied(
      this.send(
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
    const { Attributes } = await this.send(
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
      await this.send(
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
   * Runs a transaction: undefined when applied, else why each item failed (some condition did). Contention is tried
   * again by `send`; contention that outlasted every try, and any other cancellation, say nothing of the items: thrown,
   * never read as a full pool, a missing one or a stale record.
   */
  private async transact(items: TransactItem[]): Promise<CancellationReason[] | undefined> {
    try {
      await this.send(new TransactWriteCommand({ TransactItems: items }));
      return undefined;
    } catch (error) {
      const reasons = cancellationReasons(error);
      if (reasons?.some(failedCondition)) return reasons;
      throw error;
    }
  }

  /** Runs a write whose contention outlasting every try is an answer (Contended, naming the gate it met), not an error. */
  private async contended(
    write: () => Promise<CancellationReason[] | undefined>,
    changes: GateChange[],
  ): Promise<CancellationReason[] | undefined | Contended> {
    try {
      return await write();
    } catch (error) {
      if (!isContention(error)) throw error;
      // The counter the conflict was on, if it says (the first gate otherwise: it is the job's pool).
      const at = cancellationReasons(error)?.findIndex((reason) => CONTENTION_REASONS.includes(reason.Code ?? '')) ?? -1;
      return { contended: changes[at]?.gate ?? changes[0]!.gate };
    }
  }

  /**
   * Runs an admission: the counter writes of `changes` (booking a start on every rated gate the receiver takes units
   * of) then the items `rest` makes for the booked start time. A failure explained by a wrong belief about a gate's
   * rate (its ALL_OLD says otherwise) is tried again at once with the belief corrected; one explained by a booking that
   * won the race for a gate's `tat` is tried again after a jittered backoff (contention, not fullness), and after
   * CONTENTION_TRIES the admission is Contended. 'rate-limited' when a rated gate has no start within the horizon.
   */
  private async admit(
    changes: GateChange[],
    now: number,
    rest: (startAt: number | undefined) => TransactItem[],
  ): Promise<'rate-limited' | Contended | { reasons?: CancellationReason[]; counters: number; startAt?: number }> {
    for (let tries = 1; ; tries++) {
      const plan = this.plannedStart(changes, now);
      if ('retryAt' in plan) return 'rate-limited';
      const { startAt } = plan;
      const counters = this.counters(changes, undefined, startAt);
      const reasons = await this.contended(() => this.transact([...counters, ...rest(startAt)]), changes);
      if (reasons && 'contended' in reasons) return reasons;
      if (!reasons) {
        this.noteBooked(changes, startAt);
        return { counters: counters.length, startAt };
      }
      const { verdict, gate } = this.judge(changes, reasons, counters.length);
      if (verdict === Verdict.Outcome) return { reasons, counters: counters.length, startAt };
      // A belief corrected is tried again at once, a lost fence after a backoff; either way at most CONTENTION_TRIES
      // in all (a rate changed again and again, say), then Contended.
      if (tries >= CONTENTION_TRIES) return { contended: gate ?? changes[0]!.gate };
      if (verdict === Verdict.Fence) await this.backoff.sleep(contentionDelayMs(tries, this.backoff.random()));
    }
  }

  /**
   * The start the believed rates of the guarded gates give now: the latest of their bookings (none if no gate is
   * believed rated), or, if one has nothing within the horizon, when to try again.
   */
  private plannedStart(changes: GateChange[], now: number): { startAt?: number } | { retryAt: number } {
    let startAt: number | undefined;
    let retryAt: number | undefined;
    for (const change of changes) {
      const rate = change.guarded ? this.rates.get(change.gate) : undefined;
      if (!rate) continue;
      const booking = book(rate, now);
      if ('retryAt' in booking) retryAt = Math.max(retryAt ?? 0, booking.retryAt);
      else startAt = Math.max(startAt ?? 0, booking.startAt);
    }
    return retryAt !== undefined ? { retryAt } : { startAt };
  }

  /** The bookings applied: each rated gate's tat is now one interval past the start booked. */
  private noteBooked(changes: GateChange[], startAt: number | undefined): void {
    for (const change of changes) {
      const rate = change.guarded ? this.rates.get(change.gate) : undefined;
      if (rate) this.rates.set(change.gate, { intervalMs: rate.intervalMs, tat: startAt! + rate.intervalMs });
    }
  }

  /**
   * Reads why an admission's counters failed (the first `counters` reasons are the changes' counters, in order) and
   * corrects the beliefs about their rates from their ALL_OLD. See Verdict.
   */
  private judge(changes: GateChange[], reasons: CancellationReason[], counters: number): { verdict: Verdict; gate?: string } {
    let outcome = reasons.slice(counters).some(failedCondition);
    let corrected = false;
    let fenced: string | undefined;
    changes.forEach((change, i) => {
      const reason = reasons[i];
      if (!failedCondition(reason)) return;
      if (!reason!.Item) {
        outcome = true; // the gate does not exist
        return;
      }
      const seen = unmarshalled(reason!.Item) as unknown as PoolItem;
      const believed = this.rates.get(change.gate) ?? null;
      const rate = rateOf(seen);
      this.rates.set(change.gate, rate);
      // The counter's own condition: room >= delta (GATE_HAS_ROOM, GATE_WITHIN_LIMIT); an unguarded one only exists.
      if (change.guarded && Number(seen.room) < change.delta) outcome = true;
      else if ((believed === null) !== (rate === null) || believed?.intervalMs !== rate?.intervalMs) corrected = true;
      else fenced ??= change.gate; // the rate as believed, its tat moved: another booking won the race
    });
    if (outcome) return { verdict: Verdict.Outcome };
    if (corrected) return { verdict: Verdict.Belief };
    return { verdict: Verdict.Fence, gate: fenced ?? changes[0]!.gate };
  }

  /**
   * The counter writes of a slot change, one per gate (ALL_OLD on failure tells a full gate from a missing one). A
   * guarded change of 0 on a gate without a rate only checks the gate is within its limit. `overGate`, if given, must
   * be over its limit. A guarded gate believed rated books `startAt` (RATE_AS_READ); any other guarded gate must have
   * no rate (NOT_RATED).
   */
  private counters(changes: GateChange[], overGate?: string, startAt?: number): TransactItem[] {
    return changes.map(({ gate, delta, guarded }) => {
      const rate = guarded ? this.rates.get(gate) : undefined;
      if (guarded && delta === 0 && gate !== overGate && !rate) return this.counterCheck(gate, true);
      const base = gate === overGate ? GATE_OVER_LIMIT : guarded ? GATE_HAS_ROOM : GATE_EXISTS;
      const condition = !guarded ? base : rate ? `${base} AND ${RATE_AS_READ}` : `${base} AND ${NOT_RATED}`;
      return {
        Update: {
          TableName: this.tableName,
          Key: poolKey(gate),
          UpdateExpression: `ADD inUse :delta, room :minusDelta${rate ? ' SET tat = :nextTat' : ''}`,
          ConditionExpression: condition,
          ExpressionAttributeValues: {
            ':delta': delta,
            ':minusDelta': -delta,
            ...(gate === overGate && { ':zero': 0 }),
            ...(rate && { ':tat': rate.tat, ':nextTat': startAt! + rate.intervalMs }),
          },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
      };
    });
  }

  /** The gate exists and is not over its limit (checked, not written); `unrated`: and has no start rate. */
  private counterCheck(gate: string, unrated = false): TransactItem {
    return {
      ConditionCheck: {
        TableName: this.tableName,
        Key: poolKey(gate),
        ConditionExpression: unrated ? `${GATE_WITHIN_LIMIT} AND ${NOT_RATED}` : GATE_WITHIN_LIMIT,
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
  private receiving(to: Receiver, now: number, startAt?: number): TransactItem {
    return {
      Update: {
        TableName: this.tableName,
        Key: jobKey(to.jobId),
        UpdateExpression: `SET #state = :reserved, holderPool = :pool, leaseSince = :now, updatedAt = :now, #version = #version + :one${startAt === undefined ? '' : ', startAt = :startAt'}`,
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
          ...(startAt !== undefined && { ':startAt': startAt }),
        },
      },
    };
  }

  /** The waiter item of a job receiving a slot, deleted in the same transaction (none when no wait key is given). */
  private waiterGone(to: Receiver): TransactItem[] {
    if (to.waitKey === undefined) return [];
    return [{ Delete: { TableName: this.tableName, Key: waiterKey(to.gate ?? to.demand.pool, to.waitKey) } }];
  }

  /** A job record written whole, only if the job has none (a first delivery's register, made with its first move). */
  private newJob(record: JobRecord): TransactItem {
    return { Put: { TableName: this.tableName, Item: toJobItem(record), ConditionExpression: IS_NEW } };
  }

  private job(update: UpdateParts, jobId: string): TransactItem {
    return { Update: { TableName: this.tableName, Key: jobKey(jobId), ...update } };
  }

  private async register(pool: string): Promise<void> {
    await this.send(new PutCommand({ TableName: this.tableName, Item: poolRegistryKey(pool) }));
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
  const state = reason?.Item ? unmarshalled(reason.Item).state : undefined;
  return state === JobState.Reserved || state === JobState.Queued || state === JobState.Waiting;
}

function snapshotOf(pool: string, item: PoolItem): PoolSnapshot {
  const rate = rateOf(item);
  return { name: pool, limit: Number(item.limit), inUse: Number(item.inUse), ...(rate && { rate }) };
}

/** The rate a counter item carries, if any. */
function rateOf(item: Partial<PoolItem>): RateState | null {
  return item.intervalMs === undefined ? null : { intervalMs: Number(item.intervalMs), tat: Number(item.tat ?? 0) };
}

/** An error's item as the low-level client gives it ({ N: '5' }), as plain values (numbers and strings suffice here). */
function unmarshalled(item: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(item).map(([key, value]) => {
      const v = value as { N?: string; S?: string } | unknown;
      if (v && typeof v === 'object' && 'N' in v) return [key, Number((v as { N: string }).N)];
      if (v && typeof v === 'object' && 'S' in v) return [key, (v as { S: string }).S];
      return [key, v];
    }),
  );
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

/** A counter whose condition failed and that has no item: the gate does not exist. */
function missingGate(reasons: CancellationReason[]): boolean {
  return reasons.some((reason) => failedCondition(reason) && !reason.Item);
}
