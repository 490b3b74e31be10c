import type { Holder, PoolSnapshot } from '../../../shared/domain/pool';
import type { Waiter } from '../../../shared/domain/waiting';
import { AcquireOutcome, type LeaseStore, TransferOutcome } from '../../../shared/ports/leaseStore';
import { tick } from './tick';

interface PoolRow {
  limit: number;
  inUse: number;
  holders: Record<string, Holder>;
}

const has = (holders: Record<string, Holder>, jobId: string) => Object.prototype.hasOwnProperty.call(holders, jobId);

/**
 * LeaseStore in memory with the semantics of DynamoLeaseStore (shared/adapters/dynamodb/leaseStore.ts), call for call:
 * - every call is atomic (its body runs without an await), like one conditional write;
 * - acquire: CAN_ACQUIRE = pool exists AND job holds none AND inUse < limit; on failure the same diagnosis order
 *   as the adapter (no pool -> NoPool, held -> AlreadyHeld, else Full);
 * - release: HOLDS_SLOT, else false and nothing changes (a missing pool is not created);
 * - transfer: CAN_TRANSFER = from holds AND to holds none AND inUse <= limit; diagnosis: no pool or from not holding ->
 *   NotHeld, to holding -> TargetHeld, else OverLimit; transfer(a, a) throws, as the port says;
 * - createPool registers the pool whether or not it creates it; setLimit creates a missing pool and always registers it;
 * - waiters are a Put per wait key (a second add overwrites), listed in sort-key (string) order.
 */
export class InMemoryLeaseStore implements LeaseStore {
  private readonly pools = new Map<string, PoolRow>();
  private readonly registry = new Set<string>();
  private readonly waiters = new Map<string, Map<string, Waiter>>();
  /** How many port calls this store has answered (for tests that count round trips). */
  calls = 0;

  async getPool(pool: string): Promise<PoolSnapshot | undefined> {
    await this.enter();
    const row = this.pools.get(pool);
    if (!row) return undefined;
    return { name: pool, limit: row.limit, inUse: row.inUse, holders: structuredClone(row.holders) };
  }

  async listPools(): Promise<string[]> {
    await this.enter();
    return [...this.registry].sort(byCodeUnit);
  }

  async createPool(pool: string, limit: number): Promise<boolean> {
    await this.enter();
    this.registry.add(pool);
    if (this.pools.has(pool)) return false;
    this.pools.set(pool, { limit, inUse: 0, holders: {} });
    return true;
  }

  async setLimit(pool: string, limit: number): Promise<void> {
    await this.enter();
    const row = this.pools.get(pool);
    if (row) row.limit = limit;
    else this.pools.set(pool, { limit, inUse: 0, holders: {} });
    this.registry.add(pool);
  }

  async acquire(pool: string, jobId: string, holder: Holder): Promise<AcquireOutcome> {
    await this.enter();
    const row = this.pools.get(pool);
    if (row && !has(row.holders, jobId) && row.inUse < row.limit) {
      row.holders[jobId] = { ...holder };
      row.inUse += 1;
      return AcquireOutcome.Acquired;
    }
    if (!row) return AcquireOutcome.NoPool;
    if (has(row.holders, jobId)) return AcquireOutcome.AlreadyHeld;
    return AcquireOutcome.Full;
  }

  async release(pool: string, jobId: string): Promise<boolean> {
    await this.enter();
    const row = this.pools.get(pool);
    if (!row || !has(row.holders, jobId)) return false;
    delete row.holders[jobId];
    row.inUse -= 1;
    return true;
  }

  async transfer(pool: string, fromJobId: string, toJobId: string, holder: Holder): Promise<TransferOutcome> {
    await this.enter();
    if (fromJobId === toJobId) throw new Error(`cannot transfer a slot from job ${fromJobId} to itself`);
    const row = this.pools.get(pool);
    if (row && has(row.holders, fromJobId) && !has(row.holders, toJobId) && row.inUse <= row.limit) {
      delete row.holders[fromJobId];
      row.holders[toJobId] = { ...holder };
      return TransferOutcome.Transferred;
    }
    if (!row || !has(row.holders, fromJobId)) return TransferOutcome.NotHeld;
    if (has(row.holders, toJobId)) return TransferOutcome.TargetHeld;
    return TransferOutcome.OverLimit;
  }

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

  /** Test helper (not a port call, no tick): every waiter of every pool, oldest first per pool. */
  allWaiters(): Waiter[] {
    return [...this.waiters.keys()].sort(byCodeUnit).flatMap((pool) => this.sortedWaiters(pool));
  }

  /** Test helper (not a port call): a copy of the pool as stored right now. */
  peek(pool: string): PoolSnapshot | undefined {
    const row = this.pools.get(pool);
    return row ? { name: pool, limit: row.limit, inUse: row.inUse, holders: structuredClone(row.holders) } : undefined;
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

/** DynamoDB orders string sort keys by UTF-8 bytes; for the ASCII keys Sluice uses that is code-unit order. */
function byCodeUnit(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
