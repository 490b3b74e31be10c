import { admitsOnCounter, counterSwitch, isLimitedPool, isUnlimitedPool, UNLIMITED, UNLIMITED_COUNTER_LIMIT } from '../domain/unlimited';
import { inParallel } from './inParallel';
import { type Demand, defaultKeyLimit, gatesOf, isKeyGate, keyOf } from '../domain/limits';
import { isValidLimit, type PoolSnapshot } from '../domain/pool';
import { book, intervalOf } from '../domain/rate';
import type { SluiceDeps } from './deps';

/** Why a demand cannot be let in now, read from its gates' counters. */
export type Blocked =
  | { gate: string; missing: true }
  /**
   * `tooHeavy`: the gate's limit (not 0: a paused gate may be raised) is less than the job's units: it can never start.
   * `unsettled`: the gate is its pool's counter and admits nothing for now (admitsOnCounter): `unlimited`, still an
   * unlimited pool's though the configuration gives the pool a limit (to be switched, to adopting), or `adopting`.
   */
  | { gate: string; missing: false; limit: number; rate: boolean; tooHeavy: boolean; unsettled?: 'unlimited' | 'adopting' };

/**
 * Why the demand cannot be let in, read from the counters after a take or reserve failed: a gate that does not exist
 * (any of them first: a job must never wait on a list no release will look at), else the first gate with no room for
 * its units, else the first whose start rate has no start to give now (`rate`): the limit to wait on. Undefined if
 * every gate has room now (freed meanwhile).
 */
export async function blockingGate(leases: SluiceDeps['leases'], demand: Demand, now: number): Promise<Blocked | undefined> {
  const { gates, counters } = await countersOf(leases, demand);
  return blockedBy(gates, counters, demand, now);
}

/** blockingGate on counters as read (undefined: the gate does not exist), in the demand's gate order. */
export function blockedBy(
  gates: readonly string[],
  counters: ReadonlyArray<PoolSnapshot | undefined>,
  demand: Demand,
  now: number,
): Blocked | undefined {
  const missing = counters.findIndex((counter) => !counter);
  if (missing >= 0) return { gate: gates[missing]!, missing: true };
  const found = (i: number, rate: boolean, tooHeavy = false, unsettled?: 'unlimited' | 'adopting'): Blocked => ({
    gate: gates[i]!,
    missing: false,
    limit: counters[i]!.limit,
    rate,
    tooHeavy,
    ...(unsettled && { unsettled }),
  });
  // Any limit too small for the job's weight, first: whichever is full now, it could never start.
  const heavy = counters.findIndex((counter) => counter!.limit > 0 && counter!.limit < demand.units);
  if (heavy >= 0) return found(heavy, false, true);
  // A counter that admits nothing for now (a pool limited again, its earlier slots not counted yet) holds it back as a
  // full one does.
  const unsettled = counters.findIndex((counter, i) => !admitsOnCounter(counter!, { limited: demand.limited && gates[i] === demand.pool }));
  if (unsettled >= 0) return found(unsettled, false, false, counters[unsettled]!.adopting ? 'adopting' : 'unlimited');
  const full = counters.findIndex((counter) => counter!.limit - counter!.inUse < demand.units);
  if (full >= 0) return found(full, false);
  // Room everywhere: a start rate with no start to give within the horizon holds it back.
  const rated = counters.findIndex((counter) => counter!.rate !== undefined && 'retryAt' in book(counter!.rate, now));
  return rated >= 0 ? found(rated, true) : undefined;
}

/** Every gate of the demand and its counter as read now (undefined: the gate does not exist). */
async function countersOf(leases: SluiceDeps['leases'], demand: Demand) {
  const gates = gatesOf(demand);
  return { gates, counters: await Promise.all(gates.map((gate) => leases.getPool(gate))) };
}

/**
 * The first gate of the demand that is over its limit (a lowered limit), or adopting (a pool limited again whose
 * earlier slots are not counted yet: taken for over its limit), if any.
 */
export async function overLimitGate(leases: SluiceDeps['leases'], demand: Demand): Promise<string | undefined> {
  const { gates, counters } = await countersOf(leases, demand);
  const i = counters.findIndex((counter) => counter !== undefined && (counter.inUse > counter.limit || counter.adopting === true));
  return i < 0 ? undefined : gates[i];
}

/**
 * Creates a gate a job names for the first time, from configuration: a pool from its configured limit, a keyed limit
 * from its prefix's default. False when configuration has none (the job can never run: dead-lettered).
 */
export async function createConfiguredGate(deps: Pick<SluiceDeps, 'leases' | 'settings' | 'clock'>, gate: string): Promise<boolean> {
  // An unlimited pool's counter, where one is needed (a start rate's tat, or a job naming keyed limits): never full.
  const limit = isKeyGate(gate)
    ? defaultKeyLimit(keyOf(gate), deps.settings.keyLimits ?? {})
    : isUnlimitedPool(gate, deps.settings)
      ? UNLIMITED_COUNTER_LIMIT
      : deps.settings.pools[gate];
  if (limit === undefined || (limit !== UNLIMITED_COUNTER_LIMIT && !isValidLimit(limit))) return false;
  const rate = configuredRate(gate, deps.settings.rates ?? {});
  // A limited pool that was ever unlimited (marked by its first uncounted slot) may have jobs holding uncounted slots:
  // its counter is created adopting (since now), as a switch would make it, and admits once the reconciler has counted
  // them. The marks are read strongly consistent: a mark written before this read is seen.
  const adopting = isLimitedPool(gate, deps.settings) && (await deps.leases.uncountedPools()).includes(gate);
  // With its rate in the same write: a job admitted between a creation and a later setRate would start unrated.
  const intervalMs = rate === undefined ? undefined : intervalOf(rate);
  await (adopting ? deps.leases.createPool(gate, limit, intervalMs, deps.clock.now()) : deps.leases.createPool(gate, limit, intervalMs));
  return true;
}

/** The configured start rate of a gate: its own, or (a keyed limit) its prefix's `key/<prefix>:*`. */
export function configuredRate(gate: string, rates: Readonly<Record<string, number>>): number | undefined {
  if (rates[gate] !== undefined) return rates[gate];
  return isKeyGate(gate) ? rates[`key/${keyOf(gate).split(':')[0]}:*`] : undefined;
}

/**
 * Puts the counters of these pools in step with the configuration where a pool switched between unlimited and limited
 * (counterSwitch): a pool limited again gets its configured limit back and starts adopting (it admits nothing until the
 * reconciler has counted the slots taken while it was unlimited), one made unlimited the limit no pool reaches. A
 * counter that fails to switch is logged and left to the next caller. An adopting counter is not made an unlimited
 * pool's before its adoption has settled (counterSwitch): the caller may be an invocation on the configuration before
 * the deploy. `adopting`: the pools whose counter is adopting after this call (switched now, or before).
 */
export async function followConfiguration(
  deps: Pick<SluiceDeps, 'leases' | 'settings' | 'log' | 'clock'>,
  pools: readonly string[],
): Promise<{ failed: number; adopting: string[] }> {
  const { leases, settings, log, clock } = deps;
  let failed = 0;
  const adopting: string[] = [];
  await inParallel(
    // A pool the configuration no longer names is read too: its counter may have been left adopting.
    pools.filter((pool) => !isKeyGate(pool)),
    8,
    async (pool) => {
      try {
        const counter = await leases.getPool(pool);
        const now = clock.now();
        const to = counter && counterSwitch(pool, counter, settings, now, settings.adoptSettleMs);
        const switched = to !== undefined && (await leases.switchUnlimited(pool, to, now, settings.adoptSettleMs));
        if (switched) log.info('pool counter switched to follow its configuration', { pool, limit: to, adopting: to !== UNLIMITED });
        // Adopting: switched to a limit now, or by an earlier switch (this one's, or one made meanwhile by another caller).
        const after = switched ? { adopting: to !== UNLIMITED } : to === undefined ? counter : await leases.getPool(pool);
        if (after?.adopting) adopting.push(pool);
      } catch (error) {
        failed++;
        log.error('could not switch a pool counter to its configuration', { pool, error: String(error) });
      }
    },
  );
  return { failed, adopting: adopting.sort() };
}
