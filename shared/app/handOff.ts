import { freeSlots } from '../domain/pool';
import type { Waiter } from '../domain/waiting';
import { JobState } from '../domain/jobState';
import type { Move } from '../ports/jobLedger';
import { PassOutcome, ReserveOutcome } from '../ports/leaseStore';
import { MetricName, type SluiceDeps } from './deps';

/** Bounds the retry loops below; each round makes progress unless other writers keep winning races. */
const MAX_ROUNDS = 25;

/**
 * Waiters read per query when handing a slot on: the oldest, and the next one for when a concurrent releaser has just
 * reserved the oldest (runs ending together), so the loser tries it without another query.
 */
export const HAND_OFF_CANDIDATES = 2;

/**
 * Lets waiting jobs in. A released slot is handed straight to the oldest waiting job in the same transaction that
 * moves the finished job (so a newcomer cannot take it), then that job's spec is sent to the queue again: the acquirer
 * finds the job reserved and starts it. No waiting job is polled; one release costs the same whatever the backlog.
 */
export class HandOff {
  constructor(private readonly deps: Pick<SluiceDeps, 'leases' | 'ledger' | 'queue' | 'clock' | 'log' | 'metrics'>) {}

  /**
   * Applies `move` (a job giving up its slot: protocol steps complete, backoff, giveUp, giveBack), passing the slot to
   * the oldest waiter if there is one. Returns false, changing nothing, if the job's record changed since it was read.
   * `oldest` is the result of `oldestWaiters(pool, HAND_OFF_CANDIDATES)` when the caller fetched it already.
   */
  async release(pool: string, move: Move, oldest?: Promise<Waiter[]>): Promise<boolean> {
    const { leases, clock } = this.deps;
    // Waiters this call passed over (reserved by a concurrent hand-off, or stale). The list read last is used up
    // before a new read.
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
      if (next.jobId === move.jobId) {
        // The releasing job's own waiter item, left by a crash: it is not waiting.
        await leases.removeWaiter(pool, next.waitKey);
        continue;
      }
      switch (await leases.pass(pool, move, next.jobId, clock.now(), next.waitKey)) {
        case PassOutcome.Passed:
          await this.dispatch(next);
          this.deps.metrics.count(MetricName.Releases, 1, pool);
          return true;
        case PassOutcome.Stale:
          return false;
        case PassOutcome.TargetGone:
          await this.forgetIfStale(next);
          continue;
        case PassOutcome.OverLimit:
          // The limit was lowered: this slot goes away instead of being passed on.
          return this.freeThenFill(pool, move);
      }
    }
    return this.freeThenFill(pool, move);
  }

  /** Reserves free slots for the oldest waiting jobs and sends them. Returns how many it let in. */
  async fill(pool: string): Promise<number> {
    const { leases, clock } = this.deps;
    let admitted = 0;
    const passed = new Set<string>();
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const snapshot = await leases.getPool(pool);
      if (!snapshot) return admitted;
      const free = freeSlots(snapshot);
      if (free === 0) return admitted;
      const waiters = (await leases.oldestWaiters(pool, free + passed.size)).filter((waiter) => !passed.has(waiter.waitKey));
      if (waiters.length === 0) return admitted;
      for (const waiter of waiters.slice(0, free)) {
        passed.add(waiter.waitKey);
        const outcome = await leases.reserve(pool, waiter.jobId, clock.now(), waiter.waitKey);
        if (outcome === ReserveOutcome.TargetGone) {
          await this.forgetIfStale(waiter);
          continue;
        }
        if (outcome !== ReserveOutcome.Reserved) return admitted;
        await this.dispatch(waiter);
        admitted++;
      }
    }
    return admitted;
  }

  /**
   * Sends a reserved job's wake-up. Its waiter item went in the transaction that reserved it; a crash before the send
   * leaves a reservation with no message, which the reconciler re-sends after the reservation grace.
   */
  async dispatch(waiter: Waiter): Promise<void> {
    await this.deps.queue.send(waiter.body, 0, { reserved: true });
    this.deps.metrics.count(MetricName.HandOffs, 1, waiter.pool);
    this.deps.log.debug('waiting job let in', {
      jobId: waiter.jobId,
      pool: waiter.pool,
      kind: waiter.kind,
      waitedMs: this.deps.clock.now() - waiter.since,
    });
  }

  /**
   * A waiter whose job could not be given a slot: reserved by a concurrent hand-off (which is sending it, or died doing
   * so: the reconciler re-sends it), or gone past waiting (a crash left the item after its dispatch): then it is removed.
   */
  private async forgetIfStale(waiter: Waiter): Promise<void> {
    const record = await this.deps.ledger.get(waiter.jobId);
    if (record && (record.state === JobState.Reserved || record.state === JobState.Queued || record.state === JobState.Waiting)) return;
    await this.deps.leases.removeWaiter(waiter.pool, waiter.waitKey);
  }

  private async freeThenFill(pool: string, move: Move): Promise<boolean> {
    const freed = await this.deps.leases.free(pool, move, this.deps.clock.now());
    // A job may have parked after we looked for waiters and before the release, seeing the pool full: let it in.
    if (freed) {
      this.deps.metrics.count(MetricName.Releases, 1, pool);
      await this.fill(pool);
    }
    return freed;
  }
}
