import { demandOf } from './job';
import type { Demand } from './limits';
import { fnv1a } from './fnv1a';

/**
 * Pools with no concurrency limit (POOLS: `"fanout": "unlimited"`). Every other limit is a counter item every job of
 * the pool writes as it takes and gives back its slot: one item, so at most a few hundred admissions a second per pool
 * however many jobs are due. A job of an unlimited pool needs no count, so when nothing else needs its pool's counter
 * (no start rate, no keyed limit) it takes none: its `take` is a fenced write of its own record (marked `uncounted`)
 * and its release writes only that record. Everything else stays: idempotent start (the version fence), notBefore,
 * the events, the DLQ paths and the reconciler. An unlimited pool with a start rate, or a job of one naming keyed
 * limits, takes its counters as any job does (the rate's `tat` lives on the pool's counter), the pool's counter then
 * created with a limit no pool reaches (UNLIMITED_COUNTER_LIMIT).
 */
export const UNLIMITED = 'unlimited';

/** The limit of an unlimited pool's counter where one is needed (a start rate, keyed limits): never the one that is full. */
export const UNLIMITED_COUNTER_LIMIT = 1_000_000_000;

/** What decides whether a job takes counters: the stage's configuration, never the job message. */
export interface PoolConfiguration {
  /** the pools given a limit (their initial limit) */
  pools?: Readonly<Record<string, number>>;
  unlimitedPools?: readonly string[];
  rates?: Readonly<Record<string, number>>;
}

export function isUnlimitedPool(pool: string, config: PoolConfiguration): boolean {
  return config.unlimitedPools?.includes(pool) ?? false;
}

/** The configuration gives the pool a limit (a number in `pools`), not "unlimited". */
export function isLimitedPool(pool: string, config: PoolConfiguration): boolean {
  return config.pools?.[pool] !== undefined && !isUnlimitedPool(pool, config);
}

/**
 * The demand an admission onto counters carries (a take, a hand-off's receiver, a fill's, a claim): marked `limited`
 * when the configuration gives its pool a limit, so that a counter still an unlimited pool's (switched by no one yet
 * since the deploy) admits none of its jobs (admitsOnCounter).
 */
export function configuredDemand(demand: Demand, config: PoolConfiguration): Demand {
  return isLimitedPool(demand.pool, config) ? { ...demand, limited: true } : demand;
}

/**
 * The demand a `take` admits: uncounted (no gate at all) for a job of an unlimited pool without a configured start
 * rate and without keyed limits; its configured demand otherwise (configuredDemand).
 */
export function takeDemand(demand: Demand, config: PoolConfiguration): Demand {
  if (!isUnlimitedPool(demand.pool, config) || demand.keys.length > 0 || config.rates?.[demand.pool] !== undefined)
    return configuredDemand(demand, config);
  return { ...demand, uncounted: true };
}

/**
 * Whether a counted admission of `demand` may take units of this pool counter (the rule the admissions' conditions
 * state: COUNTER_NOT_ADOPTING on every gate, COUNTER_SETTLED_LIMITED on a limited pool's). Never while the counter is
 * adopting: the slots its pool's jobs took while it was unlimited are not counted on it yet, so its room is not the
 * pool's. Nor, for a pool the configuration gives a limit, while the counter is still an unlimited pool's (the limit
 * no pool reaches): the deploy came before any switch. Room is checked apart (room >= units).
 */
export function admitsOnCounter(counter: { unlimited?: boolean; adopting?: boolean }, demand: { limited?: boolean }): boolean {
  return !counter.adopting && !(demand.limited && counter.unlimited);
}

/**
 * What the counter of a pool must become now that its configuration says what it says (undefined: nothing). Whether a
 * pool is unlimited is the configuration's to say, at each take; its counter, which its rated and keyed jobs take,
 * follows once, as it switches: a pool configured unlimited whose counter is not yet an unlimited pool's (limited, or
 * adopting) gets the limit no pool reaches (the limit it had is the limited pool's, not the unlimited one's); a counter
 * still an unlimited pool's whose pool is configured limited again gets the configured limit, as a counter created from
 * configuration does, and starts *adopting* (LeaseStore.switchUnlimited): it admits nothing until the reconciler has
 * counted on it the slots taken while the pool was unlimited (adoptionDone). Between switches the counter's limit is
 * the table's, as any limit's (`sluice pool set-limit`).
 *
 * An adopting counter is not switched back to an unlimited pool's before its adoption has settled (adoptionSettled, at
 * `now` by the caller's clock): until then the caller may be an invocation still on the configuration before the
 * deploy (the pool unlimited), which must not undo the switch (the store's condition says the same).
 */
export function counterSwitch(
  pool: string,
  counter: { unlimited?: boolean; adopting?: boolean; adoptingSince?: number },
  config: PoolConfiguration & { pools: Readonly<Record<string, number>> },
  now: number,
  settleMs: number,
): 'unlimited' | number | undefined {
  if (isUnlimitedPool(pool, config)) return counter.unlimited || !adoptionSettled(counter, now, settleMs) ? undefined : UNLIMITED;
  return counter.unlimited ? config.pools[pool] : undefined;
}

/**
 * Whether a counter's adopting began at least `settleMs` (the stage's adoptSettleSeconds) before `at`: every invocation
 * still on the configuration before the deploy that made it adopting has ended by then (the acquirer's timeout, plus
 * the time a deploy takes to bring every function to the new configuration). True for a counter not adopting, and for
 * one made adopting before the time was recorded (no `adoptingSince`: as settled as it will ever be).
 */
export function adoptionSettled(counter: { adopting?: boolean; adoptingSince?: number }, at: number, settleMs: number): boolean {
  return !counter.adopting || counter.adoptingSince === undefined || at >= counter.adoptingSince + settleMs;
}

/**
 * Whether the reconciler counts an uncounted slot of `pool` it finds (`adopt`: the slot becomes a counted one of the
 * pool, its units added to the counter with no room condition, as a lowered limit leaves a counter over its limit):
 * when the configuration gives the pool a limit. A pool configured unlimited keeps its slots uncounted; a pool the
 * configuration no longer names has no limit to count them against.
 */
export function adoptsUncounted(pool: string, config: PoolConfiguration): boolean {
  return isLimitedPool(pool, config);
}

/** What one reconciler run saw of a pool's uncounted slots. */
export interface AdoptionPass {
  /** shards of the pool read whole in this run, from their first page to their last */
  wholeShards: number;
  /** uncounted slots seen that could not be counted (an error): they may still be there */
  failed: number;
  /** when (the reconciler's clock) this run began reading the first of those shards: every one was read after it */
  readsBeganAt?: number;
}

/**
 * An adopting counter admits again (its `adopting` mark removed) after a run read every shard of its pool whole and
 * counted every uncounted slot it saw, its reads begun once the adoption had settled (adoptionSettled, `settleMs`
 * after `adoptingSince`): if the settle time covers the deploy (every invocation on the configuration before it has
 * ended), no uncounted slot is taken after those reads began, so none is left that the index shows. The index lags its
 * table a moment (GSI reads are eventually consistent), so a slot written just before those reads may show later (as
 * may one taken by an invocation the settle time did not cover): it is counted then, at a later run, and the counter
 * may then be over its limit until enough jobs end (admitting nothing meanwhile). docs/protocol.md states the bound.
 * A pass whose reads have no start time (none began whole in this run) never ends it.
 */
export function adoptionDone(counter: { adopting?: boolean; adoptingSince?: number }, pass: AdoptionPass, settleMs: number): boolean {
  return (
    counter.adopting === true &&
    pass.wholeShards >= UNCOUNTED_HOLDER_SHARDS &&
    pass.failed === 0 &&
    pass.readsBeganAt !== undefined &&
    adoptionSettled(counter, pass.readsBeganAt, settleMs)
  );
}

/**
 * The demand a job holding a slot gives back: what its take counted, as its record says (`uncounted` on the slot), not
 * what the configuration says now (a pool made unlimited, or limited again, meanwhile must not move a counter its
 * holders never moved).
 */
export function heldDemand(spec: Parameters<typeof demandOf>[0], lease: { uncounted?: boolean } | undefined): Demand {
  const demand = demandOf(spec);
  return lease?.uncounted ? { ...demand, uncounted: true } : demand;
}

/**
 * Shards of an unlimited pool's entries in the holders index. A counted slot is listed under its pool's name, one index
 * partition key that every take and release of the pool writes (an index partition takes about 1,000 writes a second,
 * and a throttled index write throttles the table write that made it). An uncounted slot is listed under
 * `<pool>/<shard>` (pool names cannot contain '/'), its shard a hash of its job id: a hotspot of one unlimited pool
 * spreads over this many index partition keys.
 */
export const UNCOUNTED_HOLDER_SHARDS = 16;

/** The holders index key of an uncounted slot of `pool` held by `jobId`. */
export function uncountedHolderKey(pool: string, jobId: string): string {
  const hash = fnv1a(jobId);
  return `${pool}/${hash % UNCOUNTED_HOLDER_SHARDS}`;
}

/** Every holders index key an unlimited pool's uncounted slots may be listed under. */
export function uncountedHolderKeys(pool: string): string[] {
  return Array.from({ length: UNCOUNTED_HOLDER_SHARDS }, (_, shard) => `${pool}/${shard}`);
}

/** The pool of a holders index key (a pool's own name, or an uncounted shard's `<pool>/<shard>`). */
export function poolOfHolderKey(key: string): string {
  const slash = key.indexOf('/');
  return slash < 0 ? key : key.slice(0, slash);
}
