import type { JobKind } from '../domain/job';
import type { PoolSnapshot } from '../domain/pool';
import type { Waiter } from '../domain/waiting';
import type { Move } from './jobLedger';

export const TakeOutcome = {
  /** the job moved and holds a slot */
  Taken: 'taken',
  /** no slot free (or the pool is over a lowered limit) */
  Full: 'full',
  /** the pool does not exist in the store */
  NoPool: 'no-pool',
  /** the job's record changed since it was read: read it again and decide again */
  Stale: 'stale',
} as const;
export type TakeOutcome = (typeof TakeOutcome)[keyof typeof TakeOutcome];

export const PassOutcome = {
  /** the finished job moved and its slot went to the waiting one, in one transaction */
  Passed: 'passed',
  /** the finished job's record changed since it was read */
  Stale: 'stale',
  /** the waiting job is no longer waiting (reserved by another hand-off, started, finished): try the next */
  TargetGone: 'target-gone',
  /** the pool is over its (lowered) limit: the slot must be freed, not passed on */
  OverLimit: 'over-limit',
} as const;
export type PassOutcome = (typeof PassOutcome)[keyof typeof PassOutcome];

export const ClaimOutcome = {
  /** the reserved job moved to starting */
  Claimed: 'claimed',
  Stale: 'stale',
  /** the pool is over a lowered limit: the reservation must be taken back, not started */
  OverLimit: 'over-limit',
} as const;
export type ClaimOutcome = (typeof ClaimOutcome)[keyof typeof ClaimOutcome];

export const ReserveOutcome = {
  Reserved: 'reserved',
  Full: 'full',
  NoPool: 'no-pool',
  /** the job is no longer queued or waiting without a slot */
  TargetGone: 'target-gone',
} as const;
export type ReserveOutcome = (typeof ReserveOutcome)[keyof typeof ReserveOutcome];

/** A job holding a slot, as the holders index shows it. */
export interface HolderView {
  jobId: string;
  kind: JobKind;
  /** epoch ms the slot was taken or handed over */
  since: number;
}

/** One page of a pool's holders, and where the next page starts. */
export interface HolderPage {
  holders: HolderView[];
  next?: string;
}

/**
 * Slots and waiting jobs of pools. A pool is a small counter item (limit, inUse); a slot is a lease on the holding
 * job's own record. Every change of a slot moves the job record and the counter in one transaction, fenced by the
 * version of the record read: the count always equals the leases, and a stale writer's change fails as a whole.
 * Every write costs the same whatever the limit.
 */
export interface LeaseStore {
  getPool(pool: string): Promise<PoolSnapshot | undefined>;
  listPools(): Promise<string[]>;
  /** Creates the pool with this limit unless it exists; returns whether it created it. */
  createPool(pool: string, limit: number): Promise<boolean>;
  /** Sets the limit (creating the pool if needed). Held slots are never taken away by this call. */
  setLimit(pool: string, limit: number): Promise<void>;
  /**
   * The jobs holding a slot in the pool, a page at a time (`after` is the previous page's `next`). Read from an index
   * that may lag a moment behind the table: callers read each job's record before acting on it.
   */
  holders(pool: string, options?: { after?: string; max?: number }): Promise<HolderPage>;

  /** Moves the job (fenced by its version) and gives it a slot, if the pool has room (inUse < limit). */
  take(pool: string, move: Move, now: number): Promise<TakeOutcome>;
  /** Moves the job (fenced by its version) and frees the slot it holds. False if its record changed. */
  free(pool: string, move: Move, now: number): Promise<boolean>;
  /** As free, but only while the pool is over its limit (a reservation taken back after the limit was lowered). */
  freeOverLimit(pool: string, move: Move, now: number): Promise<boolean>;
  /**
   * Moves the finished job (fenced by its version) and hands its slot to `toJobId`, which must be queued or waiting
   * with no slot (it becomes reserved), provided the pool is not over its limit: one transaction. Its waiter item
   * (`waitKey`) is deleted in the same transaction: a removal after the wake-up was sent could delete the item a
   * revoke had just put back, leaving a waiting job no hand-off can find.
   */
  pass(pool: string, from: Move, toJobId: string, now: number, waitKey?: string): Promise<PassOutcome>;
  /**
   * Moves a reserved job to starting (fenced by its version), provided the pool is not over its limit: a reservation
   * made before a limit was lowered never starts over the new limit.
   */
  claim(pool: string, move: Move, now: number): Promise<ClaimOutcome>;
  /** Gives a free slot to `jobId` (queued or waiting with no slot; it becomes reserved), if the pool has room; deletes
   * its waiter item (`waitKey`) in the same transaction, as pass does. */
  reserve(pool: string, jobId: string, now: number, waitKey?: string): Promise<ReserveOutcome>;

  /** Parks a waiting job (idempotent for one wait key). */
  addWaiter(waiter: Waiter): Promise<void>;
  /** The oldest waiting jobs of the pool, first in first out. */
  oldestWaiters(pool: string, count: number): Promise<Waiter[]>;
  getWaiter(pool: string, waitKey: string): Promise<Waiter | undefined>;
  removeWaiter(pool: string, waitKey: string): Promise<void>;
  countWaiters(pool: string): Promise<number>;
}
