import type { PoolSnapshot } from './pool';

/** How long a pool seen full is assumed full by the next arrivals at the same acquirer. */
export const FULL_HINT_MS = 1000;

/**
 * What one acquirer environment last saw of its pools that were full: a take that failed for want of room, with the
 * counter as the failed write saw it. While it is fresh, a new arrival for the pool parks at once instead of trying a
 * take bound to fail (a cancelled transaction: a request, and on AWS maybe billed). A wrong guess costs latency, never
 * safety: parking is followed by a look at the counter, which lets in the first waiter if there is room after all
 * (the same path as a slot freed between a failed take and the park).
 */
export class FullHints {
  private readonly seen = new Map<string, { counter: PoolSnapshot; until: number }>();

  constructor(private readonly ttlMs = FULL_HINT_MS) {}

  /** A take for `pool` failed: its counter, as seen, has no room for `units`. */
  noteFull(pool: string, counter: PoolSnapshot, units: number, now: number): void {
    if (fullFor(counter, units)) this.seen.set(pool, { counter, until: now + this.ttlMs });
  }

  /** The counter last seen full, while fresh (for a demand of `units` on the pool alone), else undefined. */
  fullCounter(pool: string, units: number, now: number): PoolSnapshot | undefined {
    const hint = this.seen.get(pool);
    if (!hint || now >= hint.until) return undefined;
    return fullFor(hint.counter, units) ? hint.counter : undefined;
  }

  /** The pool had room after all (a take went through, or a look at its counter found room). */
  forget(pool: string): void {
    this.seen.delete(pool);
  }
}

/**
 * No room for `units` now, though the limit could hold them: only waiting is decided on a hint. A job heavier than the
 * limit is rejected, and that is decided on a fresh read (the limit may have been raised since).
 */
function fullFor(counter: PoolSnapshot, units: number): boolean {
  return counter.limit - counter.inUse < units && (counter.limit === 0 || counter.limit >= units);
}
