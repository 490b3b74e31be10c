import type { Holder } from '../domain/pool';
import { freeSlots } from '../domain/pool';
import type { Waiter } from '../domain/waiting';
import { AcquireOutcome, TransferOutcome } from '../ports/leaseStore';
import { MetricName, type SluiceDeps } from './deps';

/** Bounds the retry loops below; each round makes progress unless other writers keep winning races. */
const MAX_ROUNDS = 25;

/**
 * Waiters read per query when handing a slot on: the oldest, and the next one for when a concurrent releaser has just
 * reserved the oldest (runs ending together), so the loser tries it without another query.
 */
export const HAND_OFF_CANDIDATES = 2;

/**
 * Lets waiting jobs in. A released slot is handed straight to the oldest waiting job in the same conditional write
 * (so a newcomer cannot take it), then that job's spec is sent to the queue again: the acquirer finds the slot already
 * reserved and starts it. No waiting job is polled; one release costs the same whatever the backlog.
 */
export class HandOff {
  constructor(private readonly deps: Pick<SluiceDeps, 'leases' | 'queue' | 'clock' | 'log' | 'metrics'>) {}

  /**
   * Frees `jobId`'s slot, passing it to the oldest waiter if there is one. Returns false if the job held no slot.
   * `oldest` is the result of `oldestWaiters(pool, HAND_OFF_CANDIDATES)` when the caller fetched it already (in parallel
   * with its own work).
   */
  async releaseAndHandOff(pool: string, jobId: string, oldest?: Promise<Waiter[]>): Promise<boolean> {
    const { leases } = this.deps;
    // Waiters this call passed over: found reserved already (a concurrent hand-off is sending them, or died doing so,
    // which the reconciler mends after the reservation grace: sending them again would only cost a duplicate
    // delivery), or removed as stale. The list read last is used up before a new read.
    const passed = new Set<string>();
    let candidates = oldest ? await oldest : undefined;
    // A read that returned fewer waiters than it asked for saw all of them: no need to read again.
    let sawAll = candidates !== undefined && candidates.length < HAND_OFF_CANDIDATES;
    for (let round = 0; round < MAX_ROUNDS; round++) {
      let next = candidates?.find((waiter) => !passed.has(waiter.waitKey));
      if (!next) {
        if (sawAll) break;
        const wanted = passed.size + HAND_OFF_CANDIDATES;
        candidates = await leases.oldestWaiters(pool, wanted);
        sawAll = candidates.length < wanted;
        next = candidates.find((waiter) => !passed.has(waiter.waitKey));
        if (!next) break;
      }
      passed.add(next.waitKey);
      if (next.jobId === jobId) {
        // A duplicate delivery parked this job again just as it was let in: the waiter is stale, never a second run.
        await leases.removeWaiter(pool, next.waitKey);
        continue;
      }
      const outcome = await leases.transfer(pool, jobId, next.jobId, this.holderFor(next));
      switch (outcome) {
        case TransferOutcome.Transferred:
          await this.dispatch(next);
          this.deps.metrics.count(MetricName.Releases, 1, pool);
          return true;
        case TransferOutcome.NotHeld:
          return false;
        case TransferOutcome.TargetHeld:
          continue;
        case TransferOutcome.OverLimit:
          // The limit was lowered: this slot goes away instead of being passed on.
          return this.releaseThenFill(pool, jobId);
      }
    }
    return this.releaseThenFill(pool, jobId);
  }

  /** Reserves free slots for the oldest waiting jobs and sends them. Returns how many it let in. */
  async fill(pool: string): Promise<number> {
    const { leases } = this.deps;
    let admitted = 0;
    // As in releaseAndHandOff: a waiter holding a slot already is being sent by whoever reserved it.
    const reserved = new Set<string>();
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const snapshot = await leases.getPool(pool);
      if (!snapshot) return admitted;
      const free = freeSlots(snapshot);
      if (free === 0) return admitted;
      const waiters = (await leases.oldestWaiters(pool, free + reserved.size)).filter((waiter) => !reserved.has(waiter.waitKey));
      if (waiters.length === 0) return admitted;
      for (const waiter of waiters.slice(0, free)) {
        const outcome = await leases.acquire(pool, waiter.jobId, this.holderFor(waiter));
        if (outcome === AcquireOutcome.AlreadyHeld) {
          reserved.add(waiter.waitKey);
          continue;
        }
        if (outcome !== AcquireOutcome.Acquired) return admitted;
        await this.dispatch(waiter);
        admitted++;
      }
    }
    return admitted;
  }

  /** Sends a waiting job to the queue, then forgets the waiter: a crash in between sends it twice, never zero times. */
  async dispatch(waiter: Waiter): Promise<void> {
    await this.deps.queue.send(waiter.body, 0, { reserved: true });
    await this.deps.leases.removeWaiter(waiter.pool, waiter.waitKey);
    this.deps.metrics.count(MetricName.HandOffs, 1, waiter.pool);
    this.deps.log.debug('waiting job let in', {
      jobId: waiter.jobId,
      pool: waiter.pool,
      kind: waiter.kind,
      waitedMs: this.deps.clock.now() - waiter.since,
    });
  }

  private async releaseThenFill(pool: string, jobId: string): Promise<boolean> {
    const released = await this.deps.leases.release(pool, jobId);
    // A job may have parked after we looked for waiters and before the release, seeing the pool full: let it in.
    if (released) {
      this.deps.metrics.count(MetricName.Releases, 1, pool);
      await this.fill(pool);
    }
    return released;
  }

  private holderFor(waiter: Waiter): Holder {
    return { kind: waiter.kind, since: this.deps.clock.now() };
  }
}
