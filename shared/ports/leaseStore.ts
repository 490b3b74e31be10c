import type { Demand } from '../domain/limits';
import type { PoolSnapshot } from '../domain/pool';
import type { Waiter } from '../domain/waiting';
import type { JobRecord, Move } from './jobLedger';
import type { JobKind } from '../kinds/registry';

export const TakeOutcome = {
  /** the job moved and holds a slot */
  Taken: 'taken',
  /** no slot free (or the pool is over a lowered limit) */
  Full: 'full',
  /** the pool does not exist in the store */
  NoPool: 'no-pool',
  /** the job's record changed since it was read: read it again and decide again */
  Stale: 'stale',
  /** a limit's start rate has no start to give within the horizon: the job waits for the limit's tick */
  RateLimited: 'rate-limited',
  /**
   * A limit's counter kept changing under the write (other admissions booking its start rate, transactions on it):
   * nothing was written, and the limit may well have room. Contention, not fullness: the job waits on `gate`'s list,
   * where a release, the limit's tick or the reconciler lets it in.
   */
  Contended: 'contended',
} as const;
export type TakeOutcome = (typeof TakeOutcome)[keyof typeof TakeOutcome];

/** What a take did; `startAt`: when a job admitted to a limit with a start rate may start (its booked time). */
export interface TakeResult {
  outcome: TakeOutcome;
  startAt?: number;
  /**
   * Full or NoPool with a demand of one gate (its pool only): that gate's counter as the failed write saw it
   * (undefined: the gate does not exist), so the caller need not read it to know why. Absent when not given.
   */
  seen?: { counter: PoolSnapshot | undefined };
  /** Contended: the limit whose counter kept changing. */
  gate?: string;
}

export const PassOutcome = {
  /** the finished job moved and its slot went to the waiting one, in one transaction */
  Passed: 'passed',
  /** the finished job's record changed since it was read */
  Stale: 'stale',
  /**
   * the waiting job was let in by another hand-off (which starts or sends it), or holds a slot: try the next. Its
   * waiter item is left alone: a job holding a slot may wait again (a refused start) under the same wait key, and a
   * late delete would take that new item.
   */
  TargetGone: 'target-gone',
  /** the waiting job holds no slot and has moved past waiting (finished, dead, unknown): its waiter item is stale; try the next */
  TargetDone: 'target-done',
  /**
   * A limit of the waiting job has no room for it once the finished job's units are back (a pool over its lowered
   * limit, a keyed limit full, a heavier job): the slot must be freed, not passed on.
   */
  OverLimit: 'over-limit',
  /** a limit of the waiting job has no start to give within the horizon: free the slot; the limit's tick lets it in */
  RateLimited: 'rate-limited',
  /** a counter kept changing under the write (see TakeOutcome.Contended): nothing written; free the slot instead */
  Contended: 'contended',
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
  /** some limit of the job has no room for it */
  Full: 'full',
  NoPool: 'no-pool',
  /** the job was let in by another hand-off (which starts or sends it), or holds a slot (as PassOutcome.TargetGone) */
  TargetGone: 'target-gone',
  /** the job holds no slot and has moved past waiting (finished, dead, unknown): its waiter item is stale */
  TargetDone: 'target-done',
  /** a limit of the job has no start to give within the horizon */
  RateLimited: 'rate-limited',
  /** a counter kept changing under the write (see TakeOutcome.Contended): nothing written; let it be filled later */
  Contended: 'contended',
} as const;
export type ReserveOutcome = (typeof ReserveOutcome)[keyof typeof ReserveOutcome];

export const AdoptOutcome = {
  /** the uncounted slot is a counted one of its pool now, its units added to the pool's counter */
  Adopted: 'adopted',
  /** the job holds no uncounted slot of the pool (given back, or counted already): nothing written */
  NotHeld: 'not-held',
  /** the pool's counter does not exist: nothing written */
  NoPool: 'no-pool',
} as const;
export type AdoptOutcome = (typeof AdoptOutcome)[keyof typeof AdoptOutcome];

/** A release's read of a waiting list (LeaseStore.readWaitingList). */
export interface WaitingListRead {
  waiters: Waiter[];
  /** when a release of the gate last marked it for a lost hand-off race; absent: never, or the mark is gone */
  racedAt?: number;
}

/** A job a slot is handed to: queued or waiting with no slot; its waiter item, if any, goes in the same transaction. */
export interface Receiver {
  jobId: string;
  demand: Demand;
  /** the gate whose waiting list holds its waiter item (absent: its pool) */
  gate?: string;
  waitKey?: string;
  /**
   * Protocol row `receiveStarting`: the job goes straight to starting under this attempt (the claim's patch written by
   * the receiving write itself), for the releaser that passes the slot (or fills free units) and starts the job in the
   * same invocation.
   * Absent: it becomes reserved (row `receive`), and a claim moves it to starting.
   */
  starting?: StartingClaim;
}

/** A start attempt written with the slot it receives (Receiver.starting). */
export interface StartingClaim {
  /** names the invocation that owns the start (JobRecord.attempt) */
  attempt: string;
  /** when another delivery may take the start over (JobRecord.claimableAt): the start grace ahead */
  claimableAt: number;
}

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
 * Slots and waiting jobs. Every limit (a pool, or a keyed limit: a "gate", see shared/domain/limits.ts) is a small
 * counter item (limit, inUse, room); a slot is a lease on the holding job's own record, taking the job's units from
 * every gate of its demand. Every change of a slot moves the job record and all the counters it touches in one
 * transaction, fenced by the version of the record read: the counts always equal the leases, and a stale writer's
 * change fails as a whole. Every write costs the same whatever the limit.
 */
export interface LeaseStore {
  /** The counter of a gate (a pool by its name, a keyed limit by `key/<key>`). */
  getPool(gate: string): Promise<PoolSnapshot | undefined>;
  /** Every gate created so far: pools and keyed limits. */
  listPools(): Promise<string[]>;
  /**
   * Creates the gate with this limit (and start rate: ms between starts) unless it exists; returns whether it created
   * it. One write: no job is ever admitted to a configured gate before its rate is on it. `adoptingSince`: created
   * adopting since then (a pool limited again that may have uncounted slots: it admits nothing until they are counted;
   * see switchUnlimited).
   */
  createPool(gate: string, limit: number, intervalMs?: number, adoptingSince?: number): Promise<boolean>;
  /**
   * Sets the limit (creating the gate if needed, with the start rate `intervalMsIfNew`). Held slots are never taken
   * away by this call; an existing gate's rate is left as it is.
   */
  setLimit(gate: string, limit: number, intervalMsIfNew?: number): Promise<void>;
  /**
   * Switches a pool's counter between an unlimited pool's and a limited one's (shared/domain/unlimited.ts,
   * `counterSwitch`): 'unlimited' sets the limit to UNLIMITED_COUNTER_LIMIT, marks the counter `unlimited` and ends any
   * adopting; a number sets that limit, removes the mark and makes the counter *adopting* since `now` (written as
   * `adoptingSince` in the same write): it admits nothing (every admission's condition, and `claim`'s, fails on it;
   * `freeOverLimit` takes it for over its limit) until `endAdopting`. Only if the counter exists and is not that already
   * (an unlimited pool's, or not), and, to 'unlimited', not adopting since less than `settleMs` before `now`
   * (adoptionSettled: a late invocation on the configuration before the deploy must not undo the switch): false,
   * changing nothing, otherwise. A counter created with the limit UNLIMITED_COUNTER_LIMIT is marked as it is created.
   */
  switchUnlimited(pool: string, to: 'unlimited' | number, now: number, settleMs: number): Promise<boolean>;
  /**
   * Counts an uncounted slot of `pool` held by the job on the pool's counter, in one transaction: the record's slot
   * becomes a counted one of the pool (listed under the pool in the holders index) and the counter takes `units` (the
   * job's weight), with no room condition (the counter may go over its limit, as after a limit lowered). Only while the
   * record holds an uncounted slot of the pool; its version and state are left as they are.
   */
  adopt(pool: string, jobId: string, units: number): Promise<AdoptOutcome>;
  /**
   * Removes the counter's `adopting` mark: true once, if it had one (it admits again), and, `since` given, only if it is
   * adopting since then (the adoption the caller judged done, not one a later switch began).
   */
  endAdopting(pool: string, since?: number): Promise<boolean>;
  /** Sets the gate's start rate (ms between starts), or removes it (undefined). The gate must exist. */
  setRate(gate: string, intervalMs: number | undefined): Promise<void>;
  /**
   * Books a start now for a job that holds its units already (its booked time passed: a late wake-up), on every gate
   * of its demand that has a start rate: the start time, or when to try again if a rate has none within the horizon
   * (nothing booked then). `{ startAt: now }` if no gate has a rate. Throws ContentionError, booking nothing, when a
   * rated gate's counter kept changing under every try (other bookings winning the race).
   */
  book(demand: Demand, now: number): Promise<{ startAt: number } | { retryAt: number }>;
  /**
   * Elects who sends the gate's next tick (the wake-up of jobs waiting for its rate) for time `at`: true, once, unless
   * a tick is already due at or before `at` and not past (`now`). Ticks are delayed messages; a lost one is redone by
   * the reconciler's fill.
   */
  claimTick(gate: string, at: number, now: number): Promise<boolean>;
  /**
   * The jobs holding a slot in the pool, a page at a time (`after` is the previous page's `next`). Read from an index
   * that may lag a moment behind the table: callers read each job's record before acting on it.
   */
  holders(pool: string, options?: { after?: string; max?: number }): Promise<HolderPage>;
  /**
   * Every pool a slot may ever have been taken of uncounted (an unlimited pool's): a take writes its pool's mark before
   * its first uncounted slot (once per store instance), and marks are never removed, so the reconciler finds every
   * uncounted slot (under the pool's shards of the holders index) whatever the configuration says now.
   */
  uncountedPools(): Promise<string[]>;
  /** Marks the pool as one whose slots may be uncounted (idempotent; see uncountedPools). */
  markUncounted(pool: string): Promise<void>;

  /**
   * Moves the job (fenced by its version) and takes its units from every gate, if each has room for them; on a gate
   * with a start rate it also books the job's start time (within the horizon, else RateLimited), written on the record
   * as `startAt` and returned. `create`: the job's record as a first delivery registers it (not written yet, version
   * `move.version`): it is created, already moved, in the same transaction (register and take as one write), and the
   * outcome is Stale if a record for the job exists (read it and decide again).
   */
  take(demand: Demand, move: Move, now: number, create?: JobRecord): Promise<TakeResult>;
  /** Moves the job (fenced by its version) and gives back the units it holds. False if its record changed. */
  free(demand: Demand, move: Move, now: number): Promise<boolean>;
  /**
   * As free, but only while `overGate` is over its limit (a reservation taken back after a limit was lowered).
   */
  freeOverLimit(demand: Demand, overGate: string, move: Move, now: number): Promise<boolean>;
  /**
   * Moves the finished job (fenced by its version) and hands its slot to `to` (queued or waiting with no slot; it
   * becomes reserved, or starting under `to.starting`'s attempt: startRequested set, firstStartAt set if it had none;
   * either way with its start time booked on rated gates as `startAt`), provided every gate of `to` has room for
   * it once the finished job's units are back: one transaction. Its waiter item is deleted in the same transaction: a removal after the wake-up was sent could delete
   * the item a revoke had just put back, leaving a waiting job no hand-off can find.
   */
  pass(from: Demand, move: Move, to: Receiver, now: number): Promise<PassOutcome>;
  /**
   * Moves a reserved job to starting (fenced by its version), provided none of its gates is over its limit: a
   * reservation made before a limit was lowered never starts over the new limit.
   */
  claim(demand: Demand, move: Move, now: number): Promise<ClaimOutcome>;
  /** Gives free units of every gate to `to` (queued or waiting with no slot; it becomes reserved, or starting under
   * `to.starting`'s attempt, as pass does), if each has room;
   * deletes its waiter item in the same transaction, as pass does. */
  reserve(to: Receiver, now: number): Promise<ReserveOutcome>;

  /**
   * Parks a waiting job on the list of its gate (idempotent for one wait key). `create`: the job's record, already in
   * `waiting`, for a first delivery that was never registered: created in the same transaction (register and park as
   * one write). False, writing nothing, if a record for the job exists (read it and decide again).
   */
  addWaiter(waiter: Waiter, create?: JobRecord): Promise<boolean>;
  /**
   * Moves a waiter to the list of `toGate` (the limit that has no room for it now), in one transaction with its
   * removal from the list it is on. False, changing nothing, if it is no longer there (let in meanwhile).
   */
  moveWaiter(waiter: Waiter, toGate: string): Promise<boolean>;
  /** The first waiting jobs of the gate's list, in wait-key order. */
  oldestWaiters(gate: string, count: number): Promise<Waiter[]>;
  /**
   * What a release reads of the gate's list: its first `count` waiting jobs, as oldestWaiters gives them, and the time
   * of the list's race mark (markRace), if it has one, in the same read.
   */
  readWaitingList(gate: string, count: number): Promise<WaitingListRead>;
  /**
   * Marks the gate's list: a release of it lost a hand-off race at `at` (shared/domain/handOffPick.ts). A later mark
   * replaces an earlier one; the mark is not a waiter (oldestWaiters and countWaiters do not see it).
   */
  markRace(gate: string, at: number): Promise<void>;
  getWaiter(gate: string, waitKey: string): Promise<Waiter | undefined>;
  removeWaiter(gate: string, waitKey: string): Promise<void>;
  countWaiters(gate: string): Promise<number>;
  /**
   * A number for a release of the gate about to hand its slot on: one more than the last one the gate gave, so releases
   * at the same time get consecutive numbers and pick different waiters (shared/domain/handOffPick.ts).
   */
  handOffTicket(gate: string): Promise<number>;

  /**
   * The fair-share round of a tenant's next waiting job in the pool: one after the tenant's last, or the pool's current
   * round if the tenant is behind it (new, or back after a pause: it neither jumps ahead with old rounds nor waits
   * behind the others' backlog).
   */
  fairRank(pool: string, tenant: string): Promise<number>;
  /** Notes that a job of round `rank` was let in: the pool's current round moves up to it (never down). */
  advanceRound(pool: string, rank: number): Promise<void>;
}
