/** A pool as stored: its limit and the count of slots in use (each one a lease on a job record). */
export interface PoolSnapshot {
  name: string;
  limit: number;
  inUse: number;
}

export function freeSlots(pool: PoolSnapshot): number {
  return Math.max(0, pool.limit - pool.inUse);
}

/** Limits a pool may have: 0 pauses it. */
export const MAX_POOL_LIMIT = 10_000;

export function isValidLimit(limit: number): boolean {
  return Number.isInteger(limit) && limit >= 0 && limit <= MAX_POOL_LIMIT;
}
