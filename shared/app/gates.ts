import { counterSwitch, isUnlimitedPool, UNLIMITED_COUNTER_LIMIT } from '../domain/unlimited';
import { inParallel } from './inParallel';
import { type Demand, defaultKeyLimit, gatesOf, isKeyGate, keyOf } from '../domain/limits';
import { isValidLimit, type PoolSnapshot } from '../domain/pool';
import { book, intervalOf } from '../domain/rate';
import type { SluiceDeps } from './deps';

/** Why a demand cannot be let in now, read from its gates' counters. */
export type Blocked =
  | { gate: string; missing: true }
  /** `tooHeavy`: the gate's limit (not 0: a paused gate may be raised) is less than the job's units: it can never start */
  | { gate: string; missing: false; limit: number; rate: boolean; tooHeavy: boolean };

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
  const found = (i: number, rate: boolean, tooHeavy = false): Blocked => ({
    gate: gates[i]!,
    missing: false,
    limit: counters[i]!.limit,
    rate,
    tooHeavy,
  });
  // Any limit too small for the job's weight, first: whichever is full now, it could never start.
  const heavy = counters.findIndex((counter) => counter!.limit > 0 && counter!.limit < demand.units);
  if (heavy >= 0) return found(heavy, false, true);
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

/** The first gate of the demand that is over its limit (a lowered limit), if any. */
export async function overLimitGate(leases: SluiceDeps['leases'], demand: Demand): Promise<string | undefined> {
  const { gates, counters } = await countersOf(leases, demand);
  const i = counters.findIndex((counter) => counter !== undefined && counter.inUse > counter.limit);
  return i < 0 ? undefined : gates[i];
}

/**
 * Creates a gate a job names for the first time, from configuration: a pool from its configured limit, a keyed limit
 * from its prefix's default. False when configuration has none (the job can never run: dead-lettered).
 */
export async function createConfiguredGate(deps: Pick<SluiceDeps, 'leases' | 'settings'>, gate: string): Promise<boolean> {
  // An unlimited pool's counter, where one is needed (a start rate's tat, or a job naming keyed limits): never full.
  const limit = isKeyGate(gate)
    ? defaultKeyLimit(keyOf(gate), deps.settings.keyLimits ?? {})
    : isUnlimitedPool(gate, deps.settings)
      ? UNLIMITED_COUNTER_LIMIT
      : deps.settings.pools[gate];
  if (limit === undefined || (limit !== UNLIMITED_COUNTER_LIMIT && !isValidLimit(limit))) return false;
  const rate = configuredRate(gate, deps.settings.rates ?? {});
  // With its rate in the same write: a job admitted between a creation and a later setRate would start unrated.
  await deps.leases.createPool(gate, limit, rate === undefined ? undefined : intervalOf(rate));
  return true;
}

/** The configured start rate of a gate: its own, or (a keyed limit) its prefix's `key/<prefix>:*`. */
export function configuredRate(gate: string, rates: Readonly<Record<string, number>>): number | undefined {
  if (rates[gate] !== undefined) return rates[gate];
  return isKeyGate(gate) ? rates[`key/${keyOf(gate).split(':')[0]}:*`] : undefined;
}

/**
 * Puts the counters of these pools in step with the configuration where a pool switched between unlimited and limited
 * (counterSwitch): a pool limited again gets its configured limit back, one made unlimited the limit no pool reaches.
 * A counter that fails to switch is logged and left to the next caller. The pools switched, with their new limits.
 */
export async function followConfiguration(
  deps: Pick<SluiceDeps, 'leases' | 'settings' | 'log'>,
  pools: readonly string[],
): Promise<{ failed: number }> {
  const { leases, settings, log } = deps;
  const configured = new Set([...Object.keys(settings.pools), ...(settings.unlimitedPools ?? [])]);
  let failed = 0;
  await inParallel(
    pools.filter((pool) => configured.has(pool)),
    8,
    async (pool) => {
      try {
        const counter = await leases.getPool(pool);
        const to = counter && counterSwitch(pool, counter, settings);
        if (to !== undefined && (await leases.switchUnlimited(pool, to)))
          log.info('pool counter switched to follow its configuration', { pool, limit: to });
      } catch (error) {
        failed++;
        log.error('could not switch a pool counter to its configuration', { pool, error: String(error) });
      }
    },
  );
  return { failed };
}
