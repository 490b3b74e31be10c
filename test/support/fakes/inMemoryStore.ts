import type { JobKind, JobSpec, RunCompletion } from '../../../shared/domain/job';
import { ADMITTABLE_STATES, canMove, isTerminal, JobState } from '../../../shared/domain/jobState';
import type { PoolSnapshot } from '../../../shared/domain/pool';
import type { Waiter } from '../../../shared/domain/waiting';
import type { JobLedger, JobRecord, Move, RunRef } from '../../../shared/ports/jobLedger';
import { ClaimOutcome, type HolderPage, type LeaseStore, PassOutcome, ReserveOutcome, TakeOutcome } from '../../../shared/ports/leaseStore';
import { tick } from './tick';

interface StoredJob {
  record: JobRecord;
  /** epoch seconds, set on reaching a terminal state without a slot (DynamoDB TTL attribute) */
  expiresAt?: number;
}

interface PoolRow {
  limit: number;
  inUse: number;
}

export interface InMemoryStoreOptions {
  retentionDays: number;
}

/**
 * JobLedger and LeaseStore in memory, over one set of job records, with the semantics of the DynamoDB adapters
 * (shared/adapters/dynamodb), call for call: every call is atomic (its body runs without an await), like one
 * conditional write or one transaction; every move is fenced by the record's version and bumps it; slot changes move
 * the record and the pool counter together (a transaction). Records are copied in and out.
 */
export class InMemoryStore implements JobLedger, LeaseStore {
  private readonly jobs = new Map<string, StoredJob>();
  private readonly runs = new Map<string, RunRef>();
  private readonly early = new Map<string, RunCompletion>();
  private readonly pools = new Map<string, PoolRow>();
  private readonly registry = new Set<string>();
  private readonly waiters = new Map<string, Map<string, Waiter>>();
  /** How many port calls this store has answered (for tests that count round trips). */
  calls = 0;

  constructor(private readonly options: InMemoryStoreOptions = { retentionDays: 30 }) {}

  // ---- JobLedger ----------------------------------------------------------------------------------------------

  async register(spec: JobSpec, now: number): Promise<{ created: boolean; record: JobRecord }> {
    await this.enter();
    const existing = this.jobs.get(spec.id);
    if (existing) return { created: false, record: structuredClone(existing.record) };
    const record: JobRecord = {
      jobId: spec.id,
      pool: spec.pool,
      kind: spec.kind,
      state: JobState.Queued,
      spec: structuredClone(spec),
      version: 1,
      attempts: 0,
      firstSeenAt: now,
      updatedAt: now,
    };
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

  async recordRun(ref: RunRef, _now: number): Promise<RunCompletion | undefined> {
    await this.enter();
    const key = runKey(ref.kind, ref.executionId);
    const early = this.early.get(key);
    this.early.delete(key);
    this.runs.set(key, { kind: ref.kind, executionId: ref.executionId, jobId: ref.jobId, pool: ref.pool });
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

  // ---- LeaseStore: pools --------------------------------------------------------------------------------------

  async getPool(pool: string): Promise<PoolSnapshot | undefined> {
    await this.enter();
    return this.peekPool(pool);
  }

  async listPools(): Promise<string[]> {
    await this.enter();
    return [...this.registry].sort(byCodeUnit);
  }

  async createPool(pool: string, limit: number): Promise<boolean> {
    await this.enter();
    this.registry.add(pool);
    if (this.pools.has(pool)) return false;
    this.pools.set(pool, { limit, inUse: 0 });
    return true;
  }

  async setLimit(pool: string, limit: number): Promise<void> {
    await this.enter();
    const row = this.pools.get(pool);
    if (row) row.limit = limit;
    else this.pools.set(pool, { limit, inUse: 0 });
    this.registry.add(pool);
  }

  async holders(pool: string, options: { after?: string; max?: number } = {}): Promise<HolderPage> {
    await this.enter();
    const all = [...this.jobs.values()]
      .map((stored) => stored.record)
      .filter((record) => record.lease?.pool === pool && (options.after === undefined || record.jobId > options.after))
      .sort((a, b) => byCodeUnit(a.jobId, b.jobId))
      .map((record) => ({ jobId: record.jobId, kind: record.kind, since: record.lease!.since }));
    const max = options.max ?? 100;
    const holders = all.slice(0, max);
    return all.length > max ? { holders, next: holders[holders.length - 1]!.jobId } : { holders };
  }

  // ---- LeaseStore: slots (each one transaction) ----------------------------------------------------------------

  async take(pool: string, move: Move, now: number): Promise<TakeOutcome> {
    await this.enter();
    const row = this.pools.get(pool);
    const stored = this.fenced(move);
    if (!stored || stored.record.lease) return TakeOutcome.Stale;
    if (!row) return TakeOutcome.NoPool;
    if (row.inUse >= row.limit) return TakeOutcome.Full;
    row.inUse += 1;
    stored.record.lease = { pool, since: now };
    this.apply(stored, move, now);
    return TakeOutcome.Taken;
  }

  async free(pool: string, move: Move, now: number): Promise<boolean> {
    await this.enter();
    return this.release(pool, move, now, () => true);
  }

  async freeOverLimit(pool: string, move: Move, now: number): Promise<boolean> {
    await this.enter();
    return this.release(pool, move, now, (row) => row.inUse > row.limit);
  }

  async pass(pool: string, from: Move, toJobId: string, now: number, waitKey?: string): Promise<PassOutcome> {
    await this.enter();
    if (from.jobId === toJobId) throw new Error(`ValidationException: a slot cannot pass from job ${toJobId} to itself`);
    const row = this.pools.get(pool);
    const source = this.fenced(from);
    if (!source || source.record.lease?.pool !== pool || !row) return PassOutcome.Stale;
    const target = this.jobs.get(toJobId);
    if (!target || !admittable(target.record)) return PassOutcome.TargetGone;
    if (row.inUse > row.limit) return PassOutcome.OverLimit;
    delete source.record.lease;
    this.apply(source, from, now);
    this.receive(target, pool, now, waitKey);
    return PassOutcome.Passed;
  }

  async claim(pool: string, move: Move, now: number): Promise<ClaimOutcome> {
    await this.enter();
    const stored = this.fenced(move);
    if (!stored || stored.record.state !== JobState.Reserved || stored.record.lease?.pool !== pool) return ClaimOutcome.Stale;
    const row = this.pools.get(pool);
    if (!row || row.inUse > row.limit) return ClaimOutcome.OverLimit;
    this.apply(stored, move, now);
    return ClaimOutcome.Claimed;
  }

  async reserve(pool: string, jobId: string, now: number, waitKey?: string): Promise<ReserveOutcome> {
    await this.enter();
    const row = this.pools.get(pool);
    const target = this.jobs.get(jobId);
    if (!target || !admittable(target.record)) return ReserveOutcome.TargetGone;
    if (!row) return ReserveOutcome.NoPool;
    if (row.inUse >= row.limit) return ReserveOutcome.Full;
    row.inUse += 1;
    this.receive(target, pool, now, waitKey);
    return ReserveOutcome.Reserved;
  }

  // ---- LeaseStore: waiters ------------------------------------------------------------------------------------

  async addWaiter(waiter: Waiter): Promise<void> {
    await this.enter();
    let byKey = this.waiters.get(waiter.pool);
    if (!byKey) this.waiters.set(waiter.pool, (byKey = new Map()));
    byKey.set(waiter.waitKey, { ...waiter });
  }

  async oldestWaiters(pool: string, count: number): Promise<Waiter[]> {
    await this.enter();
    if (count <= 0) return [];
    return this.sortedWaiters(pool).slice(0, count);
  }

  async getWaiter(pool: string, waitKey: string): Promise<Waiter | undefined> {
    await this.enter();
    const waiter = this.waiters.get(pool)?.get(waitKey);
    return waiter ? { ...waiter } : undefined;
  }

  async removeWaiter(pool: string, waitKey: string): Promise<void> {
    await this.enter();
    this.waiters.get(pool)?.delete(waitKey);
  }

  async countWaiters(pool: string): Promise<number> {
    await this.enter();
    return this.waiters.get(pool)?.size ?? 0;
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

  /** The pool as stored right now. */
  peekPool(pool: string): PoolSnapshot | undefined {
    const row = this.pools.get(pool);
    return row ? { name: pool, limit: row.limit, inUse: row.inUse } : undefined;
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

  /** A fenced move of a job holding a slot of `pool`, freeing it, while `poolAllows` the counter's change. */
  private release(pool: string, move: Move, now: number, poolAllows: (row: PoolRow) => boolean): boolean {
    const row = this.pools.get(pool);
    const stored = this.fenced(move);
    if (!row || !poolAllows(row) || !stored || stored.record.lease?.pool !== pool) return false;
    row.inUse -= 1;
    delete stored.record.lease;
    this.apply(stored, move, now);
    return true;
  }

  private apply(stored: StoredJob, move: Move, now: number): void {
    // The fake refuses what the protocol never does (DynamoDB would apply it): a service asking for it is a bug.
    if (!canMove(stored.record.state, move.to)) throw new Error(`disallowed move ${stored.record.state} -> ${move.to} of ${move.jobId}`);
    const record = stored.record as unknown as Record<string, unknown>;
    record.state = move.to;
    record.updatedAt = now;
    record.version = stored.record.version + 1;
    for (const [field, value] of Object.entries(move.patch ?? {})) if (value !== undefined) record[field] = value;
    if (isTerminal(move.to) && !stored.record.lease) stored.expiresAt = Math.floor(now / 1000) + this.options.retentionDays * 86_400;
  }

  private receive(target: StoredJob, pool: string, now: number, waitKey: string | undefined): void {
    if (waitKey !== undefined) this.waiters.get(pool)?.delete(waitKey);
    target.record.lease = { pool, since: now };
    target.record.state = JobState.Reserved;
    target.record.updatedAt = now;
    target.record.version += 1;
  }

  private sortedWaiters(pool: string): Waiter[] {
    const byKey = this.waiters.get(pool);
    if (!byKey) return [];
    return [...byKey.keys()].sort(byCodeUnit).map((key) => ({ ...byKey.get(key)! }));
  }

  private async enter(): Promise<void> {
    this.calls++;
    await tick();
  }
}

function admittable(record: JobRecord): boolean {
  return ADMITTABLE_STATES.includes(record.state) && record.lease === undefined;
}

const runKey = (kind: string, executionId: string) => `${kind}#${executionId}`;

/** DynamoDB orders string sort keys by UTF-8 bytes; for the ASCII keys Sluice uses that is code-unit order. */
function byCodeUnit(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
