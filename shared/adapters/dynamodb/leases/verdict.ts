import type { GateChange } from '../../../domain/limits';
import { type CancellationReason, failedCondition } from '../errors';
import { admitsOnCounter } from '../../../domain/unlimited';
import { type PoolItem, rateOf, snapshotOf, unmarshalled } from './counterItem';
import type { RateBeliefs } from './rateBookings';

/**
 * What a cancelled admission's reasons say about its counters (each failed counter's ALL_OLD read, beliefs about rates
 * corrected on the way):
 * - Outcome: a condition that is the caller's answer failed: a gate missing, or without room, or not admitting (adopting,
 *   or still an unlimited pool's for a limited one's job), or an item other than the counters (the job moved, the
 *   receiver is gone);
 * - Belief: every failed counter had room, and a rate this instance did not know of (or one removed): try again now;
 * - Fence: every failed counter had room, and its `tat` had moved since it was read: another booking won the race.
 *   Contention, not fullness: back off and try again; after CONTENTION_TRIES, the admission is Contended.
 */
export const Verdict = { Outcome: 'outcome', Belief: 'belief', Fence: 'fence' } as const;
export type Verdict = (typeof Verdict)[keyof typeof Verdict];

/**
 * Reads why an admission's counters failed (the first `counters` reasons are the changes' counters, in order) and
 * corrects the beliefs about their rates from their ALL_OLD. See Verdict.
 */
export function judge(
  rates: RateBeliefs,
  changes: GateChange[],
  reasons: CancellationReason[],
  counters: number,
): { verdict: Verdict; gate?: string } {
  let outcome = reasons.slice(counters).some(failedCondition);
  let corrected = false;
  let fenced: string | undefined;
  changes.forEach((change, i) => {
    const reason = reasons[i];
    if (!failedCondition(reason)) return;
    if (!reason!.Item) {
      outcome = true; // the gate does not exist
      return;
    }
    const seen = unmarshalled(reason!.Item) as unknown as PoolItem;
    const believed = rates.get(change.gate) ?? null;
    const rate = rateOf(seen);
    rates.set(change.gate, rate);
    // The counter's own condition: room >= delta (GATE_HAS_ROOM, GATE_WITHIN_LIMIT), and a counter that admits the
    // receiver (COUNTER_NOT_ADOPTING, COUNTER_SETTLED_LIMITED); an unguarded one only exists.
    if (change.guarded && (Number(seen.room) < change.delta || !admitsOnCounter(snapshotOf(change.gate, seen), change))) outcome = true;
    else if ((believed === null) !== (rate === null) || believed?.intervalMs !== rate?.intervalMs) corrected = true;
    else fenced ??= change.gate; // the rate as believed, its tat moved: another booking won the race
  });
  if (outcome) return { verdict: Verdict.Outcome };
  if (corrected) return { verdict: Verdict.Belief };
  return { verdict: Verdict.Fence, gate: fenced ?? changes[0]!.gate };
}
