import { type Demand, defaultKeyLimit, gatesOf, isKeyGate, keyOf } from '../domain/limits';
import { isValidLimit } from '../domain/pool';
import { book, intervalOf } from '../domain/rate';
import type { SluiceDeps } from './deps';

/** Why a demand cannot be let in now, read from its gates' counters. */
export type Blocked = { gate: string; missing: true } | { gate: string; missing: false; limit: number; rate: boolean };

/**
 * Why the demand cannot be let in, read from the counters after a take or reserve failed: a gate that does not exist
 * (any of them first: a job must never wait on a list no release will look at), else the first gate with no room for
 * its units, else the first whose start rate has no start to give now (`rate`): the limit to wait on. Undefined if
 * every gate has room now (freed meanwhile).
 */
export async function blockingGate(leases: SluiceDeps['leases'], demand: Demand, now: number): Promise<Blocked | undefined> {
  const gates = gatesOf(demand);
  const counters = await Promise.all(gates.map((gate) => leases.getPool(gate)));
  const missing = counters.findIndex((counter) => !counter);
  if (missing >= 0) return { gate: gates[missing]!, missing: true };
  for (const [i, counter] of counters.entries()) {
    if (counter!.limit - counter!.inUse < demand.units) return { gate: gates[i]!, missing: false, limit: counter!.limit, rate: false };
  }
  // Room everywhere: a start rate with no start to give within the horizon holds it back.
  for (const [i, counter] of counters.entries()) {
    if (counter!.rate && 'retryAt' in book(counter!.rate, now)) return { gate: gates[i]!, missing: false, limit: counter!.limit, rate: true };
  }
  return undefined;
}

/** The first gate of the demand that is over its limit (a lowered limit), if any. */
export async function overLimitGate(leases: SluiceDeps['leases'], demand: Demand): Promise<string | undefined> {
  const gates = gatesOf(demand);
  const counters = await Promise.all(gates.map((gate) => leases.getPool(gate)));
  const i = counters.findIndex((counter) => counter !== undefined && counter.inUse > counter.limit);
  return i < 0 ? undefined : gates[i];
}

/**
 * Creates a gate a job names for the first time, from configuration: a pool from its configured limit, a keyed limit
 * from its prefix's default. False when configuration has none (the job can never run: dead-lettered).
 */
export async function createConfiguredGate(deps: Pick<SluiceDeps, 'leases' | 'settings'>, gate: string): Promise<boolean> {
  const limit = isKeyGate(gate) ? defaultKeyLimit(keyOf(gate), deps.settings.keyLimits ?? {}) : deps.settings.pools[gate];
  if (limit === undefined || !isValidLimit(limit)) return false;
  const created = await deps.leases.createPool(gate, limit);
  const rate = configuredRate(gate, deps.settings.rates ?? {});
  if (created && rate !== undefined) await deps.leases.setRate(gate, intervalOf(rate));
  return true;
}

/** The configured start rate of a gate: its own, or (a keyed limit) its prefix's `key/<prefix>:*`. */
function configuredRate(gate: string, rates: Readonly<Record<string, number>>): number | undefined {
  if (rates[gate] !== undefined) return rates[gate];
  return isKeyGate(gate) ? rates[`key/${keyOf(gate).split(':')[0]}:*`] : undefined;
}
