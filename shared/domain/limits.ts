/**
 * The limits a job draws on. Every job has a pool; it may also name keyed limits ("at most 2 per Salesforce org", on
 * top of the pool's 8 in all), and a weight: the units it takes from each of them while it holds its slot. Each limit
 * is one counter (a "gate"): a pool's gate is its name; a keyed limit's gate is `key/<key>` (pool names cannot
 * contain '/', so the two never meet). A job is admitted only when every one of its gates has room for its units, and
 * it takes them all in one transaction: it never holds one while waiting for another.
 */

/** What a job takes while it holds its slot: `units` from its pool and from each keyed limit. */
export interface Demand {
  pool: string;
  /** keyed limits, without the `key/` prefix, unique */
  keys: readonly string[];
  units: number;
  /**
   * Takes no counter at all: a job of an unlimited pool with no start rate and no keyed limit (shared/domain/unlimited.ts).
   * Its slot is its own record only; it has no gate.
   */
  uncounted?: boolean;
  /**
   * The stage's configuration gives its pool a limit (a number in `pools`): an admission onto the pool's counter
   * requires the counter be a limited pool's, not one still an unlimited pool's (shared/domain/unlimited.ts,
   * `admitsOnCounter`). Set from the configuration by the caller (`configuredDemand`), never from the job message.
   */
  limited?: boolean;
}

export const KEY_GATE_PREFIX = 'key/';

/** A pool's counter is named by the pool; a keyed limit's by its key, prefixed. */
export const keyGate = (key: string): string => `${KEY_GATE_PREFIX}${key}`;

export function isKeyGate(gate: string): boolean {
  return gate.startsWith(KEY_GATE_PREFIX);
}

/** The key of a keyed limit's gate. */
export function keyOf(gate: string): string {
  return gate.slice(KEY_GATE_PREFIX.length);
}

/** The prefix that picks a keyed limit's default maximum: the part before the first ':' ("org" for "org:acme"). */
export function keyPrefix(key: string): string {
  const colon = key.indexOf(':');
  return colon < 0 ? key : key.slice(0, colon);
}

/** Every gate of the demand: its pool first, then its keyed limits in the order given (none for an uncounted demand). */
export function gatesOf(demand: Demand): string[] {
  if (demand.uncounted) return [];
  return [demand.pool, ...demand.keys.map(keyGate)];
}

/** The default maximum of a keyed limit, from the configured defaults per prefix; undefined when none is configured. */
export function defaultKeyLimit(key: string, defaults: Readonly<Record<string, number>>): number | undefined {
  return defaults[keyPrefix(key)];
}

/**
 * How one gate's counter changes when `from` gives up its units and `to` takes its own, in one transaction:
 * `delta` is added to the units in use. `guarded` gates are ones `to` takes units of: the write applies only if the
 * counter has room for `delta` afterwards (room >= delta; a delta of 0 or less still requires the gate not be over its
 * limit afterwards, so a slot is never passed on over a lowered limit). Gates only `from` holds are freed unguarded.
 */
export interface GateChange {
  gate: string;
  delta: number;
  guarded: boolean;
  /** the receiver's pool gate, its pool configured limited (Demand.limited): its counter must be a limited pool's */
  limited?: boolean;
}

/** The counter changes of a release (`to` absent), an admission (`from` absent) or a hand-over (both). */
export function exchange(from: Demand | undefined, to: Demand | undefined): GateChange[] {
  const changes = new Map<string, GateChange>();
  if (from) for (const gate of gatesOf(from)) changes.set(gate, { gate, delta: -from.units, guarded: false });
  if (to)
    for (const gate of gatesOf(to)) {
      const freed = changes.get(gate)?.delta ?? 0;
      changes.set(gate, { gate, delta: freed + to.units, guarded: true, ...(to.limited && gate === to.pool && { limited: true }) });
    }
  return [...changes.values()];
}

/** Weights a job may have: at least 1, at most the largest limit. */
export const MAX_WEIGHT = 10_000;

/** Keyed limits one job may name (each one more item in its transactions; DynamoDB allows 100). */
export const MAX_KEYS_PER_JOB = 8;
