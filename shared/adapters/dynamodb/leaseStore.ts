import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Demand } from '../../domain/limits';
import type { PoolSnapshot } from '../../domain/pool';
import type { Waiter } from '../../domain/waiting';
import type { JobRecord, Move } from '../../ports/jobLedger';
import type {
  AdoptOutcome,
  ClaimOutcome,
  HolderPage,
  LeaseStore,
  PassOutcome,
  Receiver,
  ReserveOutcome,
  TakeResult,
  WaitingListRead,
} from '../../ports/leaseStore';
import type { Clock } from '../../ports/clock';
import { type Backoff, REAL_BACKOFF } from './contention';
import { Counters } from './leases/counters';
import { CounterWrites } from './leases/counterWrites';
import { LeaseTable } from './leases/leaseTable';
import { RateBeliefs, RateBookings } from './leases/rateBookings';
import { FairRounds } from './leases/rounds';
import { Slots } from './leases/slots';
import { UncountedSlots } from './leases/uncountedSlots';
import { Waiters } from './leases/waiters';

export { HOLDERS_INDEX } from './leases/slots';

export interface LeaseStoreOptions {
  retentionDays: number;
  /** How to wait between tries that met contention (real timers and jitter by default). */
  backoff?: Backoff;
  /**
   * The clock the callers' `now` comes from (the functions': systemClock). A start booked after waiting its turn behind
   * this instance's other bookings of a gate is booked at the time it is written: the caller's `now` moved on by the
   * wait. Without it, no time passes while a booking waits (for tests that pass fixed times).
   */
  clock?: Pick<Clock, 'now'>;
}

/**
 * Pools as small counter items (pk POOL#<pool>, sk POOL: limit, inUse) and slots as leases on job records, changed
 * together by TransactWriteItems. An item's size never depends on the limit, so neither does any write's cost.
 *
 * The LeaseStore port whole, made of one part per thing stored (./leases/): the limits' counters (counters.ts), the
 * slots on job records and the counter writes that move with them (slots.ts, counterWrites.ts), the start rates booked
 * on the counters (rateBookings.ts), the waiting lists (waiters.ts) and the tenants' fair rounds (rounds.ts). The parts
 * share one table (leaseTable.ts) and this instance's beliefs about the gates' start rates.
 */
export class DynamoLeaseStore implements LeaseStore {
  private readonly counters: Counters;
  private readonly rates: RateBookings;
  private readonly slots: Slots;
  private readonly uncounted: UncountedSlots;
  private readonly waiters: Waiters;
  private readonly rounds: FairRounds;

  constructor(doc: DynamoDBDocumentClient, tableName: string, options: LeaseStoreOptions = { retentionDays: 30 }) {
    const table = new LeaseTable(doc, tableName, options.retentionDays, options.backoff ?? REAL_BACKOFF, options.clock);
    const beliefs = new RateBeliefs();
    this.counters = new Counters(table, beliefs);
    this.rates = new RateBookings(table, beliefs);
    this.slots = new Slots(table, new CounterWrites(table, beliefs));
    this.uncounted = new UncountedSlots(table);
    this.waiters = new Waiters(table);
    this.rounds = new FairRounds(table);
  }

  getPool(gate: string): Promise<PoolSnapshot | undefined> {
    return this.counters.getPool(gate);
  }
  listPools(): Promise<string[]> {
    return this.counters.listPools();
  }
  createPool(gate: string, limit: number, intervalMs?: number, adoptingSince?: number): Promise<boolean> {
    return this.counters.createPool(gate, limit, intervalMs, adoptingSince);
  }
  setLimit(gate: string, limit: number, intervalMsIfNew?: number): Promise<void> {
    return this.counters.setLimit(gate, limit, intervalMsIfNew);
  }

  switchUnlimited(pool: string, to: 'unlimited' | number, now: number, settleMs: number): Promise<boolean> {
    return this.counters.switchUnlimited(pool, to, now, settleMs);
  }
  adopt(pool: string, jobId: string, units: number): Promise<AdoptOutcome> {
    return this.uncounted.adopt(pool, jobId, units);
  }
  endAdopting(pool: string, since?: number): Promise<boolean> {
    return this.counters.endAdopting(pool, since);
  }
  setRate(gate: string, intervalMs: number | undefined): Promise<void> {
    return this.rates.setRate(gate, intervalMs);
  }
  book(demand: Demand, now: number): Promise<{ startAt: number } | { retryAt: number }> {
    return this.rates.book(demand, now);
  }
  claimTick(gate: string, at: number, now: number): Promise<boolean> {
    return this.rates.claimTick(gate, at, now);
  }

  holders(pool: string, options?: { after?: string; max?: number }): Promise<HolderPage> {
    return this.slots.holders(pool, options);
  }
  uncountedPools(): Promise<string[]> {
    return this.uncounted.pools();
  }
  markUncounted(pool: string): Promise<void> {
    return this.uncounted.mark(pool);
  }
  take(demand: Demand, move: Move, now: number, create?: JobRecord): Promise<TakeResult> {
    // An unlimited pool's job with nothing else to count: its own record only (./leases/uncountedSlots.ts).
    return demand.uncounted ? this.uncounted.take(demand, move, now, create) : this.slots.take(demand, move, now, create);
  }
  free(demand: Demand, move: Move, now: number): Promise<boolean> {
    return demand.uncounted ? this.uncounted.free(demand, move, now) : this.slots.free(demand, move, now);
  }
  freeOverLimit(demand: Demand, overGate: string, move: Move, now: number): Promise<boolean> {
    return this.slots.freeOverLimit(demand, overGate, move, now);
  }
  pass(from: Demand, move: Move, to: Receiver, now: number): Promise<PassOutcome> {
    return this.slots.pass(from, move, to, now);
  }
  claim(demand: Demand, move: Move, now: number): Promise<ClaimOutcome> {
    return this.slots.claim(demand, move, now);
  }
  reserve(to: Receiver, now: number): Promise<ReserveOutcome> {
    return this.slots.reserve(to, now);
  }

  addWaiter(waiter: Waiter, create?: JobRecord): Promise<boolean> {
    return this.waiters.addWaiter(waiter, create);
  }
  moveWaiter(waiter: Waiter, toGate: string): Promise<boolean> {
    return this.waiters.moveWaiter(waiter, toGate);
  }
  oldestWaiters(gate: string, count: number): Promise<Waiter[]> {
    return this.waiters.oldestWaiters(gate, count);
  }
  getWaiter(gate: string, waitKey: string): Promise<Waiter | undefined> {
    return this.waiters.getWaiter(gate, waitKey);
  }
  removeWaiter(gate: string, waitKey: string): Promise<void> {
    return this.waiters.removeWaiter(gate, waitKey);
  }
  countWaiters(gate: string): Promise<number> {
    return this.waiters.countWaiters(gate);
  }
  readWaitingList(gate: string, count: number): Promise<WaitingListRead> {
    return this.waiters.readWaitingList(gate, count);
  }
  markRace(gate: string, at: number): Promise<void> {
    return this.waiters.markRace(gate, at);
  }
  handOffTicket(gate: string): Promise<number> {
    return this.waiters.handOffTicket(gate);
  }

  fairRank(pool: string, tenant: string): Promise<number> {
    return this.rounds.fairRank(pool, tenant);
  }
  advanceRound(pool: string, rank: number): Promise<void> {
    return this.rounds.advanceRound(pool, rank);
  }
}
