import type { RateState } from './rate';

/** A limit as stored: its maximum and the units in use (each slot a lease on a job record), and its start rate if any. */
export interface PoolSnapshot {
  name: string;
  limit: number;
  inUse: number;
  rate?: RateState;
}

export function freeSlots(pool: PoolSnapshot): number {
  return Math.max(0, pool.limit - pool.inUse);
}

/** Limits a pool may have: 0 pauses it. */
export const MAX_POOL_LIMIT = 10_000;

export function isValidLimit(limit: number): boolean {
  return Number.isInteger(limit) && limit >= 0 && limit <= MAX_POOL_LIMIT;
}
