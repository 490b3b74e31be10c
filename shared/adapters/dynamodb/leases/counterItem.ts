import type { PoolSnapshot } from '../../../domain/pool';
import type { RateState } from '../../../domain/rate';
import { UNLIMITED_COUNTER_LIMIT } from '../../../domain/unlimited';
import { type CancellationReason, failedCondition } from '../errors';

/**
 * A limit's counter item (a pool or a keyed limit, a "gate": pk POOL#<gate>, sk POOL), and how it is read back, also
 * from the ALL_OLD of a failed write.
 */

export interface PoolItem {
  limit: number;
  inUse: number;
  room: number;
  /** fairness: the round of the last fair job let in */
  round?: number;
  /** start rate: ms between starts, and the earliest time the next start may be booked */
  intervalMs?: number;
  tat?: number;
  /** an unlimited pool's counter (PoolSnapshot.unlimited) */
  unlimited?: boolean;
  /** a limited pool's counter not yet counting the slots taken while it was unlimited (PoolSnapshot.adopting) */
  adopting?: boolean;
  /** when it began adopting (PoolSnapshot.adoptingSince) */
  adoptingSince?: number;
}

export function snapshotOf(pool: string, item: PoolItem): PoolSnapshot {
  const rate = rateOf(item);
  return {
    name: pool,
    limit: Number(item.limit),
    inUse: Number(item.inUse),
    ...(rate && { rate }),
    // Marked, or (a counter an earlier version made an unlimited pool's, before the mark) at the limit no pool reaches.
    ...((item.unlimited || Number(item.limit) >= UNLIMITED_COUNTER_LIMIT) && { unlimited: true }),
    ...(item.adopting && { adopting: true }),
    ...(item.adopting && item.adoptingSince !== undefined && { adoptingSince: Number(item.adoptingSince) }),
  };
}

/** The rate a counter item carries, if any. */
export function rateOf(item: Partial<PoolItem>): RateState | null {
  return item.intervalMs === undefined ? null : { intervalMs: Number(item.intervalMs), tat: Number(item.tat ?? 0) };
}

/** An error's item as the low-level client gives it ({ N: '5' }), as plain values (numbers, strings and booleans suffice here). */
export function unmarshalled(item: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(item).map(([key, value]) => {
      const v = value as { N?: string; S?: string; BOOL?: boolean } | unknown;
      if (v && typeof v === 'object' && 'N' in v) return [key, Number((v as { N: string }).N)];
      if (v && typeof v === 'object' && 'BOOL' in v) return [key, (v as { BOOL: boolean }).BOOL];
      if (v && typeof v === 'object' && 'S' in v) return [key, (v as { S: string }).S];
      return [key, v];
    }),
  );
}

/** A counter whose condition failed and that has no item: the gate does not exist. */
export function missingGate(reasons: CancellationReason[]): boolean {
  return reasons.some((reason) => failedCondition(reason) && !reason.Item);
}
