import { admitsOnCounter, UNLIMITED, UNLIMITED_COUNTER_LIMIT, uncountedHolderKey } from '../../../shared/domain/unlimited';
import { demandOf, type RunCompletion } from '../../../shared/domain/job';
import { ADMITTABLE_STATES, canMove, isTerminal, JobState } from '../../../shared/domain/jobState';
import type { PoolSnapshot } from '../../../shared/domain/pool';
import { type Demand, exchange, type GateChange, gatesOf } from '../../../shared/domain/limits';
import { book, type RateState } from '../../../shared/domain/rate';
import { type Waiter, waiterGate } from '../../../shared/domain/waiting';
import { dueAtOfSortKey, dueUpToBound } from '../../../shared/domain/notBefore';
import { type JobLedger, type JobRecord, type Move, registeredRecord, type RunRef } from '../../../shared/ports/jobLedger';
import {
  AdoptOutcome,
  ClaimOutcome,
  type HolderPage,
  type LeaseStore,
  PassOutcome,
  type Receiver,
  ReserveOutcome,
  TakeOutcome,
  type TakeResult,
  type WaitingListRead,
} from '../../../shared/ports/leaseStore';
import type { DuePage, ScheduleStore, WaiterRef } from '../../../shared/ports/scheduleStore';
import { tick } from './tick';
import { ContentionError } from '../../../shared/errors';
import type { JobKind, JobSpec } from '../../../shared/kinds/registry';

interface StoredJob {
  record: JobRecord;
  /** epoch seconds, set on reaching a terminal state without a slot (DynamoDB TTL attribute) */
  expiresAt?: number;
}

interface PoolRow {
  limit: number;
  inUse: number;
  rate?: RateState;
  tickAt?: number;
  unlimited?: boolean;
  adopting?: boolean;
  adoptingSince?: number;
}

export interface InMemoryStoreOptions {
  retentionDays: number;
  /**
   * How stale the holders index is, in this store's calls: a slot taken or given back shows in `holders` only once this
   * many more calls have been answered (0: at once). DynamoDB's global secondary indexes are updated asynchronously and
   * read eventually consistent only, with no bound on the delay
   * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html#GSI.Reads): a holder may be missing from
   * a page, and one given back may still be listed.
   */
  holdersIndexLagCalls?: number;
}

/** A slot as the holders index lists it: under its index key (its pool, or an uncounted slot's shard of it). */
interface HolderEntry {
  key: string;
  kind: JobKind;
  since: number;
}

/** A write the protocol never makes, refused by the fake: a bug in the caller (the explorer reports it as one). */
export class ProtocolBreach extends Error {
  override readonly name = 'ProtocolBreach';
}

/**
 * JobLedger and LeaseStore in memory, over one set of job records, with the semantics of the DynamoDB adapters
 * (shared/adapters/dynamodb), call for call: every call is atomic (its body runs without an await), like one
 * conditional write or one transaction; every move is fenced by the record's version and bumps it; slot changes move
 * the record and the pool counter together (a transaction). Records are copied in and out.
 */
export class InMemoryStore implements JobLedger, LeaseStore, ScheduleStore {
  private readonly jobs = new Map<string, StoredJob>();
  private readonly runs = new Map<string, RunRef>();
  private readonly early = new Map<string, RunCompletion>();
  private readonly pools = new Map<string, PoolRow>();
  private readonly registry = new Set<string>();
  /** pools marked as ones whose slots may be uncounted (an uncounted take marks its pool first) */
  private readonly uncountedMarks = new Set<string>();
  private readonly waiters = new Map<string, Map<string, Waiter>>();
  /** fairness: each pool's current round, and each (pool, tenant)'s last round */
  private readonly rounds = new Map<string, number>();
  private readonly tickets = new Map<string, number>();
  /** each gate's race mark (markRace) */
  private readonly raceMarks = new Map<string, number>();
  private readonly tenantRounds = new Map<string, number>();
  /** the due index: job id -> its bucket and sort key (only scheduled jobs due beyond the horizon) */
  private readonly dueIndex = new Map<string, { bucket: string; sortKey: string }>();
  private cursor: number | undefined;
  /** The holders index as a lagging reader sees it (holdersIndexLagCalls > 0), its changes not yet shown, and the last entry seen of each job. */
  private readonly holdersView = new Map<string, HolderEntry>();
  private readonly holdersPending: { call: number; jobId: string; entry: HolderEntry | undefined }[] = [];
  private readonly holdersSeen = new Map<string, string>();
  /** How many port calls this store has answered (for tests that count round trips). */
  calls = 0;
  /**
   * Fault injection: while true, every admission (take, pass, reserve, book) loses its race for a counter, as the
   * DynamoDB adapter's admissions do once every try met another booking of the gate's start rate or a transaction on
   * its counter (shared/adapters/dynamodb/leaseStore.ts): nothing is written, and the answer is Contended (book throws
   * ContentionError). A stale record still answers Stale first, as the adapter's cancellation reasons would say.
   */
  contended = false;

  constructor(private readonly options: InMemoryStoreOptions = { retentionDays: 30 }) {}

  // ---- JobLedger ----------------------------------------------------------------------------------------------

  async register(spec: JobSpec, now: number): Promise<{ created: boolean; record: JobRecord }> {
    await this.enter();
    const existing = this.jobs.get(spec.id);
    if (existing) return { created: false, record: structuredClone(existing.record) };
    const record = registeredRecord(structuredClone(spec), now);
    this.jobs.set(spec.id, { record });
    return { created: true, record: structuredClone(record) };
  }

  async get(jobId: string): Promise<JobRecord | undefined> {
    await this.enter();
    return this.peek(jobId);
  }

  async move(move: Move, now: number): Promise<boolean> {
    await this.enter();
    const stored = this.fenced(move);
    if (!stored) return false;
    this.apply(stored, move, now);
    return true;
  }

  async forget(jobId: string, version: number): Promise<boolean> {
    await this.enter();
    const record = this.jobs.get(jobId)?.record;
    if (!record || record.version !== version || record.state !== JobState.Dead || record.lease || record.startRequested) return false;
    this.jobs.delete(jobId);
    return true;
  }

  async recordRun(ref: RunRef, _now: number): Promise<RunCompletion | undefined> {
    await this.enter();
    const key = runKey(ref.kind, ref.executionId);
    const early = this.early.get(key);
    this.runs.set(key, { kind: ref.kind, executionId: ref.executionId, jobId: ref.jobId, pool: ref.pool });
    return early && { ...early };
  }

  async notedCompletion(kind: JobKind, executionId: string): Promise<RunCompletion | undefined> {
    await this.enter();
    const early = this.early.get(runKey(kind, executionId));
    return early && { ...early };
  }

  async findRun(kind: JobKind, executionId: string): Promise<RunRef | undefined> {
    await this.enter();
    const run = this.runs.get(runKey(kind, executionId));
    return run ? { ...run } : undefined;
  }

  async noteEarlyCompletion(completion: RunCompletion, _now: number): Promise<boolean> {
    await this.enter();
    const key = runKey(completion.kind, completion.executionId);
    if (this.runs.has(key)) return false;
    this.early.set(key, { ...completion });
    return true;
  }

  async keepCompletion(completion: RunCompletion, _now: number): Promise<void> {
    await this.enter();
    const key = runKey(completion.kind, completion.executionId);
    if (!this.early.has(key)) this.early.set(key, { ...completion }); // the first kept wins
  }

  async heartbeat(jobId: string, executionId: string, now: number): Promise<boolean> {
    await this.enter();
    const record = this.jobs.get(jobId)?.record;
    if (!record || record.state !== JobState.Running || record.executionId !== executionId) return false;
    record.heartbeatAt = now;
    record.updatedAt = now;
    record.version += 1;
    return true;
  }

  // ---- ScheduleStore ------------------------------------------------------------------------------------------

  async schedule(record: JobRecord, index?: { bucket: string; sortKey: string }): Promise<boolean> {
    await this.enter();
    if (this.jobs.has(record.jobId)) return false;
    if (record.state !== JobState.Scheduled) throw new Error(`schedule writes a scheduled record, not ${record.state}`);
    this.jobs.set(record.jobId, { record: structuredClone(record) });
    if (index) this.dueIndex.set(record.jobId, { ...index });
    return true;
  }

  async due(bucket: string, upTo: number, options: { after?: string; max?: number } = {}): Promise<DuePage> {
    await this.enter();
    const bound = dueUpToBound(upTo);
    const all = [...this.dueIndex.entries()]
      .filter(
        ([, entry]) => entry.bucket === bucket && entry.sortKey <= bound && (options.after === undefined || entry.sortKey > options.after),
      )
      .sort(([, a], [, b]) => byCodeUnit(a.sortKey, b.sortKey));
    const max = options.max ?? 100;
    const page = all.slice(0, max);
    const jobs = page.map(([jobId, entry]) => ({ jobId, dueAt: dueAtOfSortKey(entry.sortKey) }));
    return all.length > max ? { jobs, next: page[page.length - 1]![1].sortKey } : { jobs };
  }

  async load(move: Move, now: number): Promise<boolean> {
    await this.enter();
    const stored = this.fenced(move);
    if (!stored || stored.record.state !== JobState.Scheduled) return false;
    this.apply(stored, move, now);
    return true;
  }

  async loaderCursor(): Promise<number | undefined> {
    await this.enter();
    return this.cursor;
  }

  async advanceLoaderCursor(minute: number): Promise<void> {
    await this.enter();
    if (this.cursor === undefined || this.cursor < minute) this.cursor = minute;
  }

  async cancel(move: Move, now: number, waiter?: WaiterRef): Promise<boolean> {
    await this.enter();
    const stored = this.fenced(move);
    const cancellable: JobState[] = [JobState.Scheduled, JobState.Queued, JobState.Waiting];
    if (!stored || stored.record.lease || !cancellable.includes(stored.record.state)) return false;
    this.apply(stored, move, now);
    if (waiter) this.waiters.get(waiter.gate)?.delete(waiter.waitKey);
    return true;
  }

  /** The jobs on the due index (test helper, no tick). */
  dueIndexed(): string[] {
    return [...this.dueIndex.keys()].sort(byCodeUnit);
  }

  // ---- LeaseStore: pools --------------------------------------------------------------------------------------

  async getPool(pool: string): Promise<PoolSnapshot | undefined> {
    await this.enter();
    return this.peekPool(pool);
  }

  async listPools(): Promise<string[]> {
    await this.enter();
    return [...this.registry].sort(byCodeUnit);
  }

  async createPool(pool: string, limit: number, intervalMs?: number, adoptingSince?: number): Promise<boolean> {
    await this.enter();
    this.registry.add(pool);
    if (this.pools.has(pool)) return false;
    this.pools.set(pool, {
      limit,
      inUse: 0,
      ...(intervalMs !== undefined && { rate: { intervalMs, tat: 0 } }),
      ...(limit === UNLIMITED_COUNTER_LIMIT && { unlimited: true }),
      ...(adoptingSince !== undefined && { adopting: true, adoptingSince }),
    });
    return true;
  }

  async switchUnlimited(pool: string, to: 'unlimited' | number, now: number, settleMs: number): Promise<boolean> {
    await this.enter();
    const row = this.pools.get(pool);
    // As COUNTER_LIMITED / COUNTER_UNLIMITED: an unlimited pool's counter is marked, or at the limit no pool reaches.
    if (!row || (row.unlimited === true || row.limit >= UNLIMITED_COUNTER_LIMIT) === (to === UNLIMITED)) return false;
    // As ADOPTION_SETTLED: an adopting counter is made an unlimited pool's only once its adoption has settled.
    if (to === UNLIMITED && row.adopting && row.adoptingSince !== undefined && row.adoptingSince > now - settleMs) return false;
    if (to === UNLIMITED) {
      row.limit = UNLIMITED_COUNTER_LIMIT;
      row.unlimited = true;
      delete row.adopting;
      delete row.adoptingSince;
    } else {
      // Limited again: adopting (admitting nothing) since now until its uncounted slots are counted (Counters.switchUnlimited).
      row.limit = to;
      delete row.unlimited;
      row.adopting = true;
      row.adoptingSince = now;
    }
    return true;
  }

  async adopt(pool: string, jobId: string, units: number): Promise<AdoptOutcome> {
    await this.enter();
    const record = this.jobs.get(jobId)?.record;
    // As HOLDING_UNCOUNTED_AT: an uncounted slot of this pool (its shard), whatever the version; no room condition. The
    // record and the counter change together or not at all, as TransactWriteItems does
    // (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html).
    if (!record?.lease?.uncounted || record.lease.pool !== pool) return AdoptOutcome.NotHeld;
    const row = this.pools.get(pool);
    if (!row) return AdoptOutcome.NoPool;
    row.inUse += units;
    delete record.lease.uncounted;
    return AdoptOutcome.Adopted;
  }

  async endAdopting(pool: string, since?: number): Promise<boolean> {
    await this.enter();
    const row = this.pools.get(pool);
    // As COUNTER_ADOPTING (and ADOPTING_SINCE, `since` given).
    if (!row?.adopting || (since !== undefined && row.adoptingSince !== since)) return false;
    delete row.adopting;
    delete row.adoptingSince;
    return true;
  }

  async setLimit(pool: string, limit: number, intervalMsIfNew?: number): Promise<void> {
    await this.enter();
    const row = this.pools.get(pool);
    if (row) row.limit = limit;
    else this.pools.set(pool, { limit, inUse: 0, ...(intervalMsIfNew !== undefined && { rate: { intervalMs: intervalMsIfNew, tat: 0 } }) });
    this.registry.add(pool);
  }

  async setRate(gate: string, intervalMs: number | undefined): Promise<void> {
    await this.enter();
    const row = this.pools.get(gate);
    if (!row) throw new Error(`ConditionalCheckFailedException: no gate ${gate}`);
    if (intervalMs === undefined) delete row.rate;
    else row.rate = { intervalMs, tat: row.rate?.tat ?? 0 };
  }

  async book(demand: Demand, now: number): Promise<{ startAt: number } | { retryAt: number }> {
    await this.enter();
    if (this.contended) throw new ContentionError(`could not book a start on ${demand.pool}: other bookings kept winning (fake)`);
    const changes = exchange(undefined, demand)
      .filter((change) => this.pools.has(change.gate))
      .map((change) => ({ ...change, delta: 0 }));
    const bookings = changes.flatMap((change) => {
      const rate = this.pools.get(change.gate)!.rate;
      return rate ? [book(rate, now)] : [];
    });
    const waits = bookings.flatMap((booking) => ('retryAt' in booking ? [booking.retryAt] : []));
    if (waits.length > 0) return { retryAt: Math.max(...waits) };
    const starts = bookings.flatMap((booking) => ('startAt' in booking ? [booking.startAt] : []));
    const startAt = starts.length > 0 ? Math.max(...starts) : undefined;
    this.applyCounters(changes, startAt);
    return { startAt: startAt ?? now };
  }

  async claimTick(gate: string, at: number, now: number): Promise<boolean> {
    await this.enter();
    const row = this.pools.get(gate);
    if (!row || (row.tickAt !== undefined && row.tickAt > now && row.tickAt <= at)) return false;
    row.tickAt = at;
    return true;
  }

  async holders(pool: string, options: { after?: string; max?: number } = {}): Promise<HolderPage> {
    await this.enter();
    const entries = this.options.holdersIndexLagCalls
      ? [...this.holdersView]
      : [...this.jobs].map(([jobId, { record }]) => [jobId, holderEntry(record)] as const);
    const all = entries
      // Listed under its index key: its pool, or an uncounted slot's shard of it (as the DynamoDB adapter writes it).
      .filter(([jobId, entry]) => entry?.key === pool && (options.after === undefined || jobId > options.after))
      .sort(([a], [b]) => byCodeUnit(a, b))
      .map(([jobId, entry]) => ({ jobId, kind: entry!.kind, since: entry!.since }));
    const max = options.max ?? 100;
    const holders = all.slice(0, max);
    return all.length > max ? { holders, next: holders[holders.length - 1]!.jobId } : { holders };
  }

  // ---- LeaseStore: slots (each one transaction) ----------------------------------------------------------------

  async uncountedPools(): Promise<string[]> {
    await this.enter();
    // As UncountedSlots.pools: a strongly consistent Query, so every mark written before it is read
    // (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/HowItWorks.ReadConsistency.html).
    return [...this.uncountedMarks].sort(byCodeUnit);
  }

  async markUncounted(pool: string): Promise<void> {
    await this.enter();
    this.uncountedMarks.add(pool);
  }

  async take(demand: Demand, move: Move, now: number, create?: JobRecord): Promise<TakeResult> {
    await this.enter();
    if (create && this.jobs.has(create.jobId)) return { outcome: TakeOutcome.Stale };
    const stored = create ? { record: structuredClone(create) } : this.fenced(move);
    if (!stored || stored.record.lease) return { outcome: TakeOutcome.Stale };
    const changes = exchange(undefined, demand);
    // An uncounted take (an unlimited pool's job) writes no counter: there is nothing to contend for.
    if (this.contended && changes.length > 0) return { outcome: TakeOutcome.Contended, gate: this.contendedGate(changes) };
    // One gate: the counter as the failed write saw it, as DynamoDB's ALL_OLD gives it.
    const seen = () => (changes.length === 1 ? { seen: { counter: this.peekPool(demand.pool) } } : {});
    const missing = this.firstMissing(changes);
    if (missing) return { outcome: TakeOutcome.NoPool, ...seen() };
    if (!this.allows(changes)) return { outcome: TakeOutcome.Full, ...seen() };
    const startAt = this.booking(changes, now);
    if (startAt === 'rate-limited') return { outcome: TakeOutcome.RateLimited };
    // The DynamoDB adapter marks the pool in a write before the take's (shared/adapters/dynamodb/leases/uncountedSlots.ts).
    if (demand.uncounted) this.uncountedMarks.add(demand.pool);
    this.applyCounters(changes, startAt);
    if (create) this.jobs.set(create.jobId, stored);
    stored.record.lease = { pool: demand.pool, since: now, ...(demand.uncounted && { uncounted: true }) };
    this.apply(stored, move, now);
    if (startAt !== undefined) stored.record.startAt = startAt;
    return { outcome: TakeOutcome.Taken, ...(startAt !== undefined && { startAt }) };
  }

  async free(demand: Demand, move: Move, now: number): Promise<boolean> {
    await this.enter();
    return this.release(demand, move, now, () => true);
  }

  async freeOverLimit(demand: Demand, overGate: string, move: Move, now: number): Promise<boolean> {
    await this.enter();
    return this.release(demand, move, now, () => {
      const row = this.pools.get(overGate);
      // As GATE_OVER_LIMIT: over its limit, or adopting (taken for over it until its uncounted slots are counted).
      return row !== undefined && (row.inUse > row.limit || row.adopting === true);
    });
  }

  async pass(from: Demand, move: Move, to: Receiver, now: number): Promise<PassOutcome> {
    await this.enter();
    if (move.jobId === to.jobId) throw new Error(`ValidationException: a slot cannot pass from job ${to.jobId} to itself`);
    const changes = exchange(from, to.demand);
    const source = this.fenced(move);
    if (!source || source.record.lease?.pool !== from.pool) return PassOutcome.Stale;
    const target = this.jobs.get(to.jobId);
    if (!target || !admittable(target.record)) return stillWaiting(target?.record) ? PassOutcome.TargetGone : PassOutcome.TargetDone;
    if (this.contended) return PassOutcome.Contended;
    if (this.firstMissing(changes) || !this.allows(changes)) return PassOutcome.OverLimit;
    const startAt = this.booking(changes, now);
    if (startAt === 'rate-limited') return PassOutcome.RateLimited;
    this.applyCounters(changes, startAt);
    delete source.record.lease;
    this.apply(source, move, now);
    this.receive(target, to, now, startAt);
    return PassOutcome.Passed;
  }

  async claim(demand: Demand, move: Move, now: number): Promise<ClaimOutcome> {
    await this.enter();
    const stored = this.fenced(move);
    if (!stored || stored.record.state !== JobState.Reserved || stored.record.lease?.pool !== demand.pool) return ClaimOutcome.Stale;
    // Every gate checked, none changed: within its limit.
    const checks = exchange(undefined, demand).map((change) => ({ ...change, delta: 0 }));
    if (this.firstMissing(checks) || !this.allows(checks)) return ClaimOutcome.OverLimit;
    this.apply(stored, move, now);
    return ClaimOutcome.Claimed;
  }

  async reserve(to: Receiver, now: number): Promise<ReserveOutcome> {
    await this.enter();
    const target = this.jobs.get(to.jobId);
    if (!target || !admittable(target.record)) return stillWaiting(target?.record) ? ReserveOutcome.TargetGone : ReserveOutcome.TargetDone;
    const changes = exchange(undefined, to.demand);
    if (this.contended) return ReserveOutcome.Contended;
    if (this.firstMissing(changes)) return ReserveOutcome.NoPool;
    if (!this.allows(changes)) return ReserveOutcome.Full;
    const startAt = this.booking(changes, now);
    if (startAt === 'rate-limited') return ReserveOutcome.RateLimited;
    this.applyCounters(changes, startAt);
    this.receive(target, to, now, startAt);
    return ReserveOutcome.Reserved;
  }

  // ---- LeaseStore: waiters ------------------------------------------------------------------------------------

  async addWaiter(waiter: Waiter, create?: JobRecord): Promise<boolean> {
    await this.enter();
    if (create && this.jobs.has(create.jobId)) return false;
    this.putWaiter(waiter);
    if (create) this.jobs.set(create.jobId, { record: structuredClone(create) });
    return true;
  }

  async moveWaiter(waiter: Waiter, toGate: string): Promise<boolean> {
    await this.enter();
    const from = this.waiters.get(waiterGate(waiter));
    if (!from?.has(waiter.waitKey)) return false;
    from.delete(waiter.waitKey);
    this.putWaiter({ ...waiter, gate: toGate });
    return true;
  }

  async oldestWaiters(pool: string, count: number): Promise<Waiter[]> {
    await this.enter();
    if (count <= 0) return [];
    return this.sortedWaiters(pool).slice(0, count);
  }

  async readWaitingList(gate: string, count: number): Promise<WaitingListRead> {
    await this.enter();
    const racedAt = this.raceMarks.get(gate);
    return { waiters: count <= 0 ? [] : this.sortedWaiters(gate).slice(0, count), ...(racedAt !== undefined && { racedAt }) };
  }

  async markRace(gate: string, at: number): Promise<void> {
    await this.enter();
    this.raceMarks.set(gate, at);
  }

  async getWaiter(pool: string, waitKey: string): Promise<Waiter | undefined> {
    await this.enter();
    const waiter = this.waiters.get(pool)?.get(waitKey);
    return waiter ? structuredClone(waiter) : undefined;
  }

  async removeWaiter(pool: string, waitKey: string): Promise<void> {
    await this.enter();
    this.waiters.get(pool)?.delete(waitKey);
  }

  async countWaiters(pool: string): Promise<number> {
    await this.enter();
    return this.waiters.get(pool)?.size ?? 0;
  }

  async handOffTicket(gate: string): Promise<number> {
    await this.enter();
    const ticket = (this.tickets.get(gate) ?? 0) + 1;
    this.tickets.set(gate, ticket);
    return ticket;
  }

  async fairRank(pool: string, tenant: string): Promise<number> {
    await this.enter();
    const key = `${pool}#${tenant}`;
    const last = this.tenantRounds.get(key);
    const round = this.rounds.get(pool) ?? 0;
    const rank = last === undefined || last < round ? round : last + 1;
    this.tenantRounds.set(key, rank);
    return rank;
  }

  async advanceRound(pool: string, rank: number): Promise<void> {
    await this.enter();
    this.rounds.set(pool, Math.max(this.rounds.get(pool) ?? 0, rank));
  }

  // ---- test helpers (not port calls, no tick) -----------------------------------------------------------------

  /** A copy of one record. */
  peek(jobId: string): JobRecord | undefined {
    const stored = this.jobs.get(jobId);
    return stored ? structuredClone(stored.record) : undefined;
  }

  /** Every record, in registration order. */
  all(): JobRecord[] {
    return [...this.jobs.values()].map((stored) => structuredClone(stored.record));
  }

  /** The TTL attribute the record would carry in DynamoDB. */
  expiresAtOf(jobId: string): number | undefined {
    return this.jobs.get(jobId)?.expiresAt;
  }

  /** The record's TTL passed: DynamoDB deleted it (its run references stay until their own TTL), and its id is free. */
  expire(jobId: string): void {
    this.jobs.delete(jobId);
  }

  /** The pool as stored right now. */
  peekPool(pool: string): PoolSnapshot | undefined {
    const row = this.pools.get(pool);
    return row
      ? {
          name: pool,
          limit: row.limit,
          inUse: row.inUse,
          ...(row.rate && { rate: { ...row.rate } }),
          ...((row.unlimited || row.limit >= UNLIMITED_COUNTER_LIMIT) && { unlimited: true }),
          ...(row.adopting && { adopting: true }),
          ...(row.adopting && row.adoptingSince !== undefined && { adoptingSince: row.adoptingSince }),
        }
      : undefined;
  }

  /** The pool as stored with its holders (job id -> kind and since), the way tests look at a pool. */
  poolView(pool: string): (PoolSnapshot & { holders: Record<string, { kind: JobKind; since: number }> }) | undefined {
    const snapshot = this.peekPool(pool);
    if (!snapshot) return undefined;
    const holders = Object.fromEntries(
      this.all()
        .filter((record) => record.lease?.pool === pool)
        .map((record) => [record.jobId, { kind: record.kind, since: record.lease!.since }]),
    );
    return { ...snapshot, holders };
  }

  /** The jobs holding a slot of the pool, sorted. */
  holdersOf(pool: string): string[] {
    return this.all()
      .filter((record) => record.lease?.pool === pool)
      .map((record) => record.jobId)
      .sort(byCodeUnit);
  }

  /** The jobs holding units of a gate (a pool, or a keyed limit's `key/<key>`), sorted. */
  holdersOfGate(gate: string): string[] {
    return this.all()
      .filter((record) => record.lease && gatesOf(demandOf(record.spec)).includes(gate))
      .map((record) => record.jobId)
      .sort(byCodeUnit);
  }

  /** Every waiter of every pool, oldest first per pool. */
  allWaiters(): Waiter[] {
    return [...this.waiters.keys()].sort(byCodeUnit).flatMap((pool) => this.sortedWaiters(pool));
  }

  // ---- internals ----------------------------------------------------------------------------------------------

  /** The stored job if its version is still the one the move was read at. */
  private fenced(move: Move): StoredJob | undefined {
    const stored = this.jobs.get(move.jobId);
    return stored && stored.record.version === move.version ? stored : undefined;
  }

  /** A fenced move of a job holding a slot of its pool, giving back its units, while `allowed`. */
  private release(demand: Demand, move: Move, now: number, allowed: () => boolean): boolean {
    const changes = exchange(demand, undefined);
    const stored = this.fenced(move);
    if (this.firstMissing(changes) || !allowed() || !stored || stored.record.lease?.pool !== demand.pool) return false;
    // A slot is given back as it was taken: an uncounted one (an unlimited pool's) moves no counter, a counted one does.
    if ((stored.record.lease.uncounted === true) !== (demand.uncounted === true)) return false;
    this.applyCounters(changes);
    delete stored.record.lease;
    this.apply(stored, move, now);
    return true;
  }

  /** The gate a contended admission names: its first rated one (where bookings race), else its first. */
  private contendedGate(changes: GateChange[]): string {
    return changes.find((change) => this.pools.get(change.gate)?.rate)?.gate ?? changes[0]!.gate;
  }

  private firstMissing(changes: GateChange[]): string | undefined {
    return changes.find((change) => !this.pools.has(change.gate))?.gate;
  }

  /**
   * Every guarded gate keeps within its limit after its change (room >= delta, as the DynamoDB condition says) and
   * admits the receiver (COUNTER_NOT_ADOPTING, COUNTER_SETTLED_LIMITED: shared/domain/unlimited.ts, admitsOnCounter).
   */
  private allows(changes: GateChange[]): boolean {
    return changes.every((change) => {
      const row = this.pools.get(change.gate)!;
      return !change.guarded || (row.limit - row.inUse >= change.delta && admitsOnCounter(this.peekPool(change.gate)!, change));
    });
  }

  /** The start booked on the rated gates the receiver takes units of (the latest of them), undefined if none is rated. */
  private booking(changes: GateChange[], now: number): number | undefined | 'rate-limited' {
    let startAt: number | undefined;
    for (const change of changes) {
      const rate = change.guarded ? this.pools.get(change.gate)!.rate : undefined;
      if (!rate) continue;
      const booking = book(rate, now);
      if ('retryAt' in booking) return 'rate-limited';
      startAt = Math.max(startAt ?? 0, booking.startAt);
    }
    return startAt;
  }

  private applyCounters(changes: GateChange[], startAt?: number): void {
    for (const change of changes) {
      const row = this.pools.get(change.gate)!;
      row.inUse += change.delta;
      if (change.guarded && row.rate) row.rate = { ...row.rate, tat: startAt! + row.rate.intervalMs };
    }
  }

  private putWaiter(waiter: Waiter): void {
    const gate = waiterGate(waiter);
    let byKey = this.waiters.get(gate);
    if (!byKey) this.waiters.set(gate, (byKey = new Map()));
    byKey.set(waiter.waitKey, structuredClone(waiter));
  }

  private apply(stored: StoredJob, move: Move, now: number): void {
    // The fake refuses what the protocol never does (DynamoDB would apply it): a service asking for it is a bug.
    if (!canMove(stored.record.state, move.to)) throw new Error(`disallowed move ${stored.record.state} -> ${move.to} of ${move.jobId}`);
    // Every move out of scheduled takes the job off the due index (the adapter removes its keys in the same write).
    if (move.to !== JobState.Scheduled) this.dueIndex.delete(move.jobId);
    const record = stored.record as unknown as Record<string, unknown>;
    record.state = move.to;
    record.updatedAt = now;
    record.version = stored.record.version + 1;
    for (const [field, value] of Object.entries(move.patch ?? {})) if (value !== undefined) record[field] = value;
    if (isTerminal(move.to) && !stored.record.lease) stored.expiresAt = Math.floor(now / 1000) + this.options.retentionDays * 86_400;
  }

  private receive(target: StoredJob, to: Receiver, now: number, startAt?: number): void {
    if (startAt !== undefined) target.record.startAt = startAt;
    if (to.waitKey !== undefined) this.waiters.get(to.gate ?? to.demand.pool)?.delete(to.waitKey);
    target.record.lease = { pool: to.demand.pool, since: now };
    target.record.state = JobState.Reserved;
    if (to.starting) {
      // The releaser starts it without looking for a run first: a job that holds no slot has no start of unknown
      // outcome (every row that gives a slot back after a start was asked for found it refused). The fake refuses a
      // path that breaks this, so the explorer finds it.
      if (target.record.startRequested) throw new ProtocolBreach(`job ${to.jobId} receives a slot with a start of unknown outcome`);
      // Row receiveStarting: the claim's patch in the same write (as the adapter's SET, firstStartAt if_not_exists).
      target.record.state = JobState.Starting;
      target.record.attempt = to.starting.attempt;
      target.record.claimableAt = to.starting.claimableAt;
      target.record.startRequested = true;
      target.record.firstStartAt ??= now;
    }
    target.record.updatedAt = now;
    target.record.version += 1;
  }

  private sortedWaiters(pool: string): Waiter[] {
    const byKey = this.waiters.get(pool);
    if (!byKey) return [];
    return [...byKey.keys()].sort(byCodeUnit).map((key) => structuredClone(byKey.get(key)!));
  }

  private async enter(): Promise<void> {
    this.calls++;
    if (this.options.holdersIndexLagCalls) this.propagateHolders(this.options.holdersIndexLagCalls);
    await tick();
  }

  /** Shows every change the holders index has not shown yet (as after a delay longer than the index's). */
  catchUpHoldersIndex(): void {
    if (this.options.holdersIndexLagCalls) this.propagateHolders(0);
  }

  /** Notes the index entries the calls before this one changed, and shows those that `lag` later calls have not seen. */
  private propagateHolders(lag: number): void {
    const ids = new Set([...this.jobs.keys(), ...this.holdersSeen.keys()]);
    for (const jobId of ids) {
      const record = this.jobs.get(jobId)?.record;
      const entry = record && holderEntry(record);
      const seen = entry && JSON.stringify(entry);
      if (seen === this.holdersSeen.get(jobId)) continue;
      if (seen === undefined) this.holdersSeen.delete(jobId);
      else this.holdersSeen.set(jobId, seen);
      // made by the call before this one
      this.holdersPending.push({ call: this.calls - 1, jobId, entry });
    }
    while (this.holdersPending.length > 0 && this.holdersPending[0]!.call < this.calls - lag) {
      const { jobId, entry } = this.holdersPending.shift()!;
      if (entry) this.holdersView.set(jobId, entry);
      else this.holdersView.delete(jobId);
    }
  }
}

/** Not admittable, yet still on its way in (reserved by another hand-off): its waiter item is not stale. */
/** As the adapter's: on its way in, or holding a slot (it may wait again under the same wait key). */
function stillWaiting(record: JobRecord | undefined): boolean {
  return (
    record !== undefined &&
    (([JobState.Reserved, JobState.Queued, JobState.Waiting] as JobState[]).includes(record.state) || record.lease !== undefined)
  );
}

function admittable(record: JobRecord): boolean {
  return ADMITTABLE_STATES.includes(record.state) && record.lease === undefined;
}

const runKey = (kind: string, executionId: string) => `${kind}#${executionId}`;

/** DynamoDB orders string sort keys by UTF-8 bytes; for the ASCII keys Sluice uses that is code-unit order. */
function byCodeUnit(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A job's entry in the holders index: none unless it holds a slot. */
function holderEntry(record: JobRecord): HolderEntry | undefined {
  return record.lease ? { key: holderKey(record), kind: record.kind, since: record.lease.since } : undefined;
}

/** A held slot's key in the holders index (shared/domain/unlimited.ts: an uncounted slot is listed under its shard). */
function holderKey(record: JobRecord): string {
  return record.lease!.uncounted ? uncountedHolderKey(record.lease!.pool, record.jobId) : record.lease!.pool;
}
