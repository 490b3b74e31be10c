import type { GateChange } from '../../../domain/limits';
import { UNLIMITED_COUNTER_LIMIT } from '../../../domain/unlimited';
import {
  COUNTER_NOT_ADOPTING,
  COUNTER_SETTLED_LIMITED,
  GATE_EXISTS,
  GATE_HAS_ROOM,
  GATE_OVER_LIMIT,
  GATE_WITHIN_LIMIT,
  NOT_RATED,
  RATE_AS_READ,
} from '../conditions';
import { CONTENTION_TRIES, contentionDelayMs } from '../contention';
import type { CancellationReason } from '../errors';
import { poolKey } from '../keys';
import type { Contended, LeaseTable, TransactItem } from './leaseTable';
import { noteBooked, plannedStart, type RateBeliefs } from './rateBookings';
import { judge, Verdict } from './verdict';

type Admission = 'rate-limited' | Contended | { reasons?: CancellationReason[]; counters: number; startAt?: number };

/**
 * The counter writes of a slot change (one per gate of the demands it touches: its units, and its start booked on a
 * rated gate), and an admission: those writes and the job's, as one transaction tried again while a wrong belief or a
 * lost race for a rate explains its failure.
 */
export class CounterWrites {
  constructor(
    private readonly table: LeaseTable,
    private readonly rates: RateBeliefs,
  ) {}

  /**
   * Runs an admission: the counter writes of `changes` (booking a start on every rated gate the receiver takes units
   * of) then the items `rest` makes for the booked start time. A failure explained by a wrong belief about a gate's
   * rate (its ALL_OLD says otherwise) is tried again at once with the belief corrected; one explained by a booking that
   * won the race for a gate's `tat` is tried again after a jittered backoff (contention, not fullness), and after
   * CONTENTION_TRIES the admission is Contended. 'rate-limited' when a rated gate has no start within the horizon.
   */
  async admit(changes: GateChange[], now: number, rest: (startAt: number | undefined) => TransactItem[]): Promise<Admission> {
    const clock = this.table.movedOn(now);
    return this.rates.inTurn(changes, () => this.admitInTurn(changes, clock, rest));
  }

  private async admitInTurn(
    changes: GateChange[],
    clock: () => number,
    rest: (startAt: number | undefined) => TransactItem[],
  ): Promise<Admission> {
    for (let tries = 1; ; tries++) {
      // The time of this try, read once its turn came (and again after a backoff): a start is never booked before the
      // write that books it.
      const plan = plannedStart(this.rates, changes, clock());
      if ('retryAt' in plan) return 'rate-limited';
      const { startAt } = plan;
      const counters = this.counters(changes, undefined, startAt);
      const reasons = await this.table.contended(() => this.table.transact([...counters, ...rest(startAt)]), changes);
      if (reasons && 'contended' in reasons) return reasons;
      if (!reasons) {
        noteBooked(this.rates, changes, startAt);
        return { counters: counters.length, startAt };
      }
      const { verdict, gate } = judge(this.rates, changes, reasons, counters.length);
      if (verdict === Verdict.Outcome) return { reasons, counters: counters.length, startAt };
      // A belief corrected is tried again at once, a lost fence after a backoff; either way at most CONTENTION_TRIES
      // in all (a rate changed again and again, say), then Contended.
      if (tries >= CONTENTION_TRIES) return { contended: gate ?? changes[0]!.gate };
      if (verdict === Verdict.Fence) await this.table.backoff.sleep(contentionDelayMs(tries, this.table.backoff.random()));
    }
  }

  /**
   * The counter writes of a slot change, one per gate (ALL_OLD on failure tells a full gate from a missing one). A
   * guarded change of 0 on a gate without a rate only checks the gate is within its limit. `overGate`, if given, must
   * be over its limit (or adopting). A guarded gate believed rated books `startAt` (RATE_AS_READ); any other guarded gate
   * must have no rate (NOT_RATED). A guarded gate admits only if it is not adopting, and a limited pool's receiver only
   * onto a limited pool's counter (admitsOnCounter).
   */
  counters(changes: GateChange[], overGate?: string, startAt?: number): TransactItem[] {
    return changes.map(({ gate, delta, guarded, limited }) => {
      const rate = guarded ? this.rates.get(gate) : undefined;
      if (guarded && delta === 0 && gate !== overGate && !rate) return this.counterCheck(gate, true, limited);
      const base = gate === overGate ? GATE_OVER_LIMIT : guarded ? `${GATE_HAS_ROOM} AND ${admits(limited)}` : GATE_EXISTS;
      const condition = !guarded ? base : rate ? `${base} AND ${RATE_AS_READ}` : `${base} AND ${NOT_RATED}`;
      return {
        Update: {
          TableName: this.table.tableName,
          Key: poolKey(gate),
          UpdateExpression: `ADD inUse :delta, room :minusDelta${rate ? ' SET tat = :nextTat' : ''}`,
          ConditionExpression: condition,
          ...(guarded && limited && { ExpressionAttributeNames: { '#limit': 'limit' } }),
          ExpressionAttributeValues: {
            ':delta': delta,
            ':minusDelta': -delta,
            ...(gate === overGate && { ':zero': 0 }),
            ...(rate && { ':tat': rate.tat, ':nextTat': startAt! + rate.intervalMs }),
            ...(guarded && limited && { ':unlimitedLimit': UNLIMITED_COUNTER_LIMIT }),
          },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
      };
    });
  }

  /**
   * The gate exists, is not over its limit and admits (not adopting; `limited`: a limited pool's counter), checked, not
   * written; `unrated`: and has no start rate.
   */
  counterCheck(gate: string, unrated = false, limited = false): TransactItem {
    const within = `${GATE_WITHIN_LIMIT} AND ${admits(limited)}`;
    return {
      ConditionCheck: {
        TableName: this.table.tableName,
        Key: poolKey(gate),
        ConditionExpression: unrated ? `${within} AND ${NOT_RATED}` : within,
        ...(limited && { ExpressionAttributeNames: { '#limit': 'limit' } }),
        ExpressionAttributeValues: { ':zero': 0, ...(limited && { ':unlimitedLimit': UNLIMITED_COUNTER_LIMIT }) },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      },
    };
  }
}

/** What a counter must be to admit (shared/domain/unlimited.ts, admitsOnCounter). */
function admits(limited: boolean | undefined): string {
  return limited ? COUNTER_SETTLED_LIMITED : COUNTER_NOT_ADOPTING;
}
