import type { JobKind } from './job';

/** One slot of a pool, held by one job (by its id). A holder without a run is a reservation: the job is being started. */
export interface Holder {
  kind: JobKind;
  /** epoch ms the slot was taken */
  since: number;
}

/** A pool as stored: its limit, the count of slots in use and who holds them (the count always equals the holders). */
export interface PoolSnapshot {
  name: string;
  limit: number;
  inUse: number;
  holders: Record<string, Holder>;
}

export function freeSlots(pool: PoolSnapshot): number {
  return Math.max(0, pool.limit - pool.inUse);
}

export function isHeldBy(pool: PoolSnapshot, jobId: string): boolean {
  return Object.prototype.hasOwnProperty.call(pool.holders, jobId);
}

/** Limits a pool may have: 0 pauses it; the upper bound keeps the holders map far below DynamoDB's 400 KB item size. */
export const MAX_POOL_LIMIT = 1000;

export function isValidLimit(limit: number): boolean {
  return Number.isInteger(limit) && limit >= 0 && limit <= MAX_POOL_LIMIT;
}
