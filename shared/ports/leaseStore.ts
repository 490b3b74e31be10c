import type { Holder, PoolSnapshot } from '../domain/pool';
import type { Waiter } from '../domain/waiting';

export const AcquireOutcome = {
  /** this call took a slot for the job */
  Acquired: 'acquired',
  /** the job already holds a slot (a reservation made for it, or a duplicate delivery): nothing changed */
  AlreadyHeld: 'already-held',
  /** no slot free */
  Full: 'full',
  /** the pool does not exist in the store */
  NoPool: 'no-pool',
} as const;
export type AcquireOutcome = (typeof AcquireOutcome)[keyof typeof AcquireOutcome];

export const TransferOutcome = {
  /** the slot moved from the finished job to the waiting one in one write */
  Transferred: 'transferred',
  /** the finished job held nothing (a duplicate or late release) */
  NotHeld: 'not-held',
  /** the waiting job holds a slot already */
  TargetHeld: 'target-held',
  /** the limit was lowered below what is in use: the slot must be freed, not passed on */
  OverLimit: 'over-limit',
} as const;
export type TransferOutcome = (typeof TransferOutcome)[keyof typeof TransferOutcome];

/**
 * Slots and waiting jobs of pools. Every change of a pool's slots is one atomic conditional write, so the number in use
 * never exceeds the limit, and each slot names the job that holds it (so a leaked slot can be found and freed).
 */
export interface LeaseStore {
  getPool(pool: string): Promise<PoolSnapshot | undefined>;
  listPools(): Promise<string[]>;
  /** Creates the pool with this limit unless it exists; returns whether it created it. */
  createPool(pool: string, limit: number): Promise<boolean>;
  /** Sets the limit (creating the pool if needed). Running jobs are never touched. */
  setLimit(pool: string, limit: number): Promise<void>;

  /** Takes a slot for `jobId` if one is free; a no-op when the job holds one already. */
  acquire(pool: string, jobId: string, holder: Holder): Promise<AcquireOutcome>;
  /** Frees the slot `jobId` holds; returns false (and changes nothing) when it holds none. */
  release(pool: string, jobId: string): Promise<boolean>;
  /**
   * Frees `fromJobId`'s slot and gives it to `toJobId` in one write, so no newcomer can take it in between. The two
   * must differ (throws otherwise).
   */
  transfer(pool: string, fromJobId: string, toJobId: string, holder: Holder): Promise<TransferOutcome>;

  /** Parks a waiting job (idempotent for one wait key). */
  addWaiter(waiter: Waiter): Promise<void>;
  /** The oldest waiting jobs of the pool, first in first out. */
  oldestWaiters(pool: string, count: number): Promise<Waiter[]>;
  getWaiter(pool: string, waitKey: string): Promise<Waiter | undefined>;
  removeWaiter(pool: string, waitKey: string): Promise<void>;
  countWaiters(pool: string): Promise<number>;
}
