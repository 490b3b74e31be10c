import type { RateState } from './rate';

/** A limit as stored: its maximum and the units in use (each slot a lease on a job record), and its start rate if any. */
export interface PoolSnapshot {
  name: string;
  limit: number;
  inUse: number;
  rate?: RateState;
  /**
   * An unlimited pool's counter (needed by its rated and keyed jobs only): its limit was set from the stage's
   * configuration naming the pool unlimited (shared/domain/unlimited.ts, `counterSwitch`).
   */
  unlimited?: boolean;
  /**
   * A pool limited again whose counter does not yet count the slots its jobs took while it was unlimited: nothing is
   * admitted onto it (as over its limit) until the reconciler has counted them (shared/domain/unlimited.ts).
   */
  adopting?: boolean;
  /** when (epoch ms, the switching caller's clock) the counter began adopting; absent on counters an earlier version made adopting */
  adoptingSince?: number;
}

/** The slots a fill may hand out: none while the counter is adopting (every admission onto it would be refused). */
export function freeSlots(pool: PoolSnapshot): number {
  return pool.adopting ? 0 : Math.max(0, pool.limit - pool.inUse);
}

/** Limits a pool may have: 0 pauses it. */
export const MAX_POOL_LIMIT = 10_000;

export function isValidLimit(limit: number): boolean {
  return Number.isInteger(limit) && limit >= 0 && limit <= MAX_POOL_LIMIT;
}
