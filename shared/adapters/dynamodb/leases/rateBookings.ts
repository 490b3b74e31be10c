import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { type Demand, type GateChange, gatesOf } from '../../../domain/limits';
import { book, type RateState } from '../../../domain/rate';
import { ContentionError } from '../../../errors';
import { GATE_KNOWN, NOT_RATED, RATE_AS_READ, TICK_NOT_DUE } from '../conditions';
import { CONTENTION_TRIES, contentionDelayMs } from '../contention';
import { isConditionalCheckFailed } from '../errors';
import { poolKey } from '../keys';
import { unmarshalled } from './counterItem';
import type { LeaseTable } from './leaseTable';
import { judge, Verdict } from './verdict';

/**
 * Start rates, as stored on a limit's counter item: `intervalMs` (ms between starts), `tat` (the earliest time the next
 * start may be booked: a generic cell rate, shared/domain/rate.ts) and `tickAt` (the next tick elected). An admission
 * books its start with its units (./counterWrites.ts); a late start books on its own (`book`).
 */

/**
 * What this instance believes of each gate's start rate: its state (with the `tat` last seen), null for none, absent
 * for not known (as none). A belief is never trusted: an admission to a gate believed to have no rate carries
 * NOT_RATED, one to a rated gate RATE_AS_READ, so a wrong belief fails the write, and its ALL_OLD corrects it.
 *
 * It also lines up this instance's bookings of a gate: each books on the `tat` the one before it wrote, instead of
 * all of them on the same read with one winner (the others' writes refused, tried again, refused again). Bookings
 * of other instances still meet at the counter, and the fence decides as before (shared/adapters/dynamodb/contention.ts).
 */
export class RateBeliefs extends Map<string, RateState | null> {
  /** The tick this instance last saw elected for each gate (its `tickAt`). */
  readonly ticks = new Map<string, number>();
  private readonly tails = new Map<string, Promise<void>>();

  /**
   * Runs `admit` once this instance's admissions before it on the same gates are done: on every guarded gate not known
   * to have no rate (rated, or not known yet: the first admission learns it for those behind it). Gates are queued
   * for in name order, so two admissions never wait for each other.
   */
  async inTurn<T>(changes: GateChange[], admit: () => Promise<T>): Promise<T> {
    return this.oneAtATime([...new Set(changes.filter((c) => c.guarded && this.get(c.gate) !== null).map((c) => c.gate))], admit);
  }

  /** Runs `run` once this instance's runs before it on any of `keys` are done (keys queued for in name order). */
  async oneAtATime<T>(keys: string[], run: () => Promise<T>): Promise<T> {
    if (!rateBookingTuning.inTurn) return run();
    const releases: Array<() => void> = [];
    try {
      for (const key of [...keys].sort()) {
        const before = this.tails.get(key);
        let release!: () => void;
        const mine = new Promise<void>((resolve) => (release = resolve));
        const tail = (before ?? Promise.resolve()).then(() => mine);
        this.tails.set(key, tail);
        releases.push(() => {
          release();
          if (this.tails.get(key) === tail) this.tails.delete(key);
        });
        if (before) await before;
      }
      return await run();
    } finally {
      for (const release of releases) release();
    }
  }
}

/** How bookings meet each other (the bench compares them back to back: bench/rateMain.ts). */
export const rateBookingTuning = {
  /**
   * An instance's bookings of one gate one at a time (RateBeliefs.inTurn), and its tick elections, each skipped when a
   * tick it saw elected is still to come; false: all at once, the conditions decide.
   */
  inTurn: true,
};

export class RateBookings {
  constructor(
    private readonly table: LeaseTable,
    private readonly rates: RateBeliefs,
  ) {}

  async setRate(gate: string, intervalMs: number | undefined): Promise<void> {
    await this.table.send(
      new UpdateCommand({
        TableName: this.table.tableName,
        Key: poolKey(gate),
        ...(intervalMs === undefined
          ? { UpdateExpression: 'REMOVE intervalMs, tat' }
          : {
              UpdateExpression: 'SET intervalMs = :interval, tat = if_not_exists(tat, :zero)',
              ExpressionAttributeValues: { ':interval': intervalMs, ':zero': 0 },
            }),
        ConditionExpression: GATE_KNOWN,
      }),
    );
    this.rates.delete(gate);
  }

  async book(demand: Demand, now: number): Promise<{ startAt: number } | { retryAt: number }> {
    // Every gate of the demand, none changed: a rated one moves its tat (fenced by the one read), an unrated one is
    // checked to be still unrated (a rate set meanwhile fails the write and is learned).
    const changes = gatesOf(demand).map((gate) => ({ gate, delta: 0, guarded: true }));
    const clock = this.table.movedOn(now);
    return this.rates.inTurn(changes, () => this.bookInTurn(demand, changes, clock));
  }

  private async bookInTurn(demand: Demand, changes: GateChange[], clock: () => number): Promise<{ startAt: number } | { retryAt: number }> {
    for (let tries = 1; ; tries++) {
      // The time of this try, read once its turn came (and again after a backoff), as an admission's (./counterWrites.ts).
      const now = clock();
      const plan = plannedStart(this.rates, changes, now);
      if ('retryAt' in plan) return plan;
      const { startAt } = plan;
      const items = changes.map(({ gate }) => {
        const rate = this.rates.get(gate);
        if (!rate)
          return {
            ConditionCheck: {
              TableName: this.table.tableName,
              Key: poolKey(gate),
              ConditionExpression: NOT_RATED,
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
            },
          };
        return {
          Update: {
            TableName: this.table.tableName,
            Key: poolKey(gate),
            UpdateExpression: 'SET tat = :nextTat',
            ConditionExpression: RATE_AS_READ,
            ExpressionAttributeValues: { ':tat': rate.tat, ':nextTat': startAt! + rate.intervalMs },
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
          },
        };
      });
      const reasons = await this.table.contended(() => this.table.transact(items), changes);
      if (reasons && 'contended' in reasons)
        throw new ContentionError(`could not book a start on ${reasons.contended}: other bookings kept winning`);
      if (!reasons) {
        noteBooked(this.rates, changes, startAt);
        return { startAt: startAt ?? now };
      }
      const { verdict, gate } = judge(this.rates, changes, reasons, changes.length);
      if (verdict === Verdict.Outcome) throw new Error(`could not book a start on ${gatesOf(demand).join(', ')}: a gate is missing`);
      if (verdict === Verdict.Fence) {
        if (tries >= CONTENTION_TRIES) throw new ContentionError(`could not book a start on ${gate}: other bookings kept winning`);
        await this.table.backoff.sleep(contentionDelayMs(tries, this.table.backoff.random()));
      }
    }
  }

  async claimTick(gate: string, at: number, now: number): Promise<boolean> {
    // One at a time: each finds the tick the one before it elected.
    return this.rates.oneAtATime([`tick#${gate}`], () => this.claimTickInTurn(gate, at, now));
  }

  private async claimTickInTurn(gate: string, at: number, now: number): Promise<boolean> {
    // A tick this instance saw elected (its own, or the one a refusal returned) is still to come, no later than this
    // one: its message is on its way, as a refused election would say (TICK_NOT_DUE: a tickAt ahead only moves
    // earlier). Not sent: under a burst every parked job asks, and all but one would be refused.
    const elected = rateBookingTuning.inTurn ? this.rates.ticks.get(gate) : undefined;
    if (elected !== undefined && elected > now && elected <= at) return false;
    try {
      await this.table.send(
        new UpdateCommand({
          TableName: this.table.tableName,
          Key: poolKey(gate),
          UpdateExpression: 'SET tickAt = :at',
          ConditionExpression: TICK_NOT_DUE,
          ExpressionAttributeValues: { ':at': at, ':now': now },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      this.rates.ticks.set(gate, at);
      return true;
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
      // The tick elected (the document client does not unmarshall an error's item).
      const item = (error as { Item?: Record<string, unknown> }).Item;
      const tickAt = item ? Number(unmarshalled(item).tickAt) : NaN;
      if (Number.isFinite(tickAt)) this.rates.ticks.set(gate, tickAt);
      return false;
    }
  }
}

/**
 * The start the believed rates of the guarded gates give now: the latest of their bookings (none if no gate is
 * believed rated), or, if one has nothing within the horizon, when to try again.
 */
export function plannedStart(rates: RateBeliefs, changes: GateChange[], now: number): { startAt?: number } | { retryAt: number } {
  let startAt: number | undefined;
  let retryAt: number | undefined;
  for (const change of changes) {
    const rate = change.guarded ? rates.get(change.gate) : undefined;
    if (!rate) continue;
    const booking = book(rate, now);
    if ('retryAt' in booking) retryAt = Math.max(retryAt ?? 0, booking.retryAt);
    else startAt = Math.max(startAt ?? 0, booking.startAt);
  }
  return retryAt !== undefined ? { retryAt } : { startAt };
}

/** The bookings applied: each rated gate's tat is now one interval past the start booked; the others have no rate. */
export function noteBooked(rates: RateBeliefs, changes: GateChange[], startAt: number | undefined): void {
  for (const change of changes) {
    if (!change.guarded) continue;
    const rate = rates.get(change.gate);
    // A guarded gate not believed rated was written with NOT_RATED: it had no rate then.
    rates.set(change.gate, rate ? { intervalMs: rate.intervalMs, tat: startAt! + rate.intervalMs } : null);
  }
}
