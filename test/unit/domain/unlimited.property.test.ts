import fc from 'fast-check';
import { exchange, gatesOf } from '../../../shared/domain/limits';
import { blockedBy } from '../../../shared/app/gates';
import { freeSlots } from '../../../shared/domain/pool';
import {
  adoptionDone,
  adoptionSettled,
  admitsOnCounter,
  adoptsUncounted,
  configuredDemand,
  counterSwitch,
  heldDemand,
  takeDemand,
  UNCOUNTED_HOLDER_SHARDS,
  UNLIMITED,
} from '../../../shared/domain/unlimited';

/** Whether a job takes counters is the stage's configuration's call, and a release gives back what the take counted. */

const T = 1_700_000_000_000;
/** A settle time (adoptSettleSeconds); the rules hold for any. */
const SETTLE = 330_000;

const pool = fc.constantFrom('fanout', 'etl', 'default');
const demand = fc.record({
  pool,
  keys: fc.uniqueArray(fc.constantFrom('org:a', 'org:b'), { maxLength: 2 }),
  units: fc.integer({ min: 1, max: 5 }),
});
const config = fc.record({
  unlimitedPools: fc.subarray(['fanout', 'etl', 'default']),
  rates: fc.dictionary(pool, fc.constantFrom(1, 2.5)),
});

describe('unlimited pools: the take', () => {
  test('takes no counter exactly when its pool is unlimited, has no configured rate and the job names no keyed limit', () => {
    fc.assert(
      fc.property(demand, config, (d, c) => {
        const taken = takeDemand(d, c);
        const uncounted = c.unlimitedPools.includes(d.pool) && d.keys.length === 0 && c.rates[d.pool] === undefined;
        expect(taken.uncounted === true).toBe(uncounted);
        // An uncounted demand touches no gate, so an admission or a release of it writes no counter...
        if (uncounted) expect([gatesOf(taken), exchange(undefined, taken), exchange(taken, undefined)]).toEqual([[], [], []]);
        // ...and a counted one still takes its units from its pool and every keyed limit (a rated unlimited pool included).
        else expect(gatesOf(taken)).toEqual([d.pool, ...d.keys.map((k) => `key/${k}`)]);
      }),
    );
  });

  test('a limited pool or no configuration at all: every job takes its counters, as before', () => {
    expect(takeDemand({ pool: 'etl', keys: [], units: 1 }, {}).uncounted).toBeUndefined();
    expect(takeDemand({ pool: 'etl', keys: [], units: 1 }, { unlimitedPools: ['fanout'] }).uncounted).toBeUndefined();
  });
});

describe('unlimited pools: the release', () => {
  test('gives back what the slot on the record says was counted, whatever the configuration says now', () => {
    const spec = { pool: 'fanout', weight: 3 };
    expect(heldDemand(spec, { uncounted: true })).toEqual({ pool: 'fanout', keys: [], units: 3, uncounted: true });
    expect(heldDemand(spec, {})).toEqual({ pool: 'fanout', keys: [], units: 3 });
    expect(heldDemand(spec, undefined)).toEqual({ pool: 'fanout', keys: [], units: 3 });
  });
});

describe('unlimited pools: the counter follows a switch of the configuration, once', () => {
  const switchConfig = fc.record({ unlimited: fc.boolean(), limit: fc.option(fc.integer({ min: 0, max: 50 }), { nil: undefined }) });

  test("switched to an unlimited pool's when configured unlimited, back to the configured limit when limited; else left alone", () => {
    fc.assert(
      fc.property(switchConfig, fc.boolean(), ({ unlimited, limit }, marked) => {
        const config = {
          unlimitedPools: unlimited ? ['fanout'] : [],
          pools: (limit === undefined ? {} : { fanout: limit }) as Record<string, number>,
        };
        const to = counterSwitch('fanout', marked ? { unlimited: true } : {}, config, T, SETTLE);
        if (unlimited) expect(to).toBe(marked ? undefined : UNLIMITED);
        else expect(to).toBe(marked ? limit : undefined);
        // Once: the counter as the switch leaves it needs no other.
        if (to !== undefined)
          expect(
            counterSwitch('fanout', to === UNLIMITED ? { unlimited: true } : { adopting: true, adoptingSince: T }, config, T, SETTLE),
          ).toBeUndefined();
      }),
    );
  });
});

describe('a pool limited again: what its counter admits, and when it admits again', () => {
  const counter = fc.record({ unlimited: fc.boolean(), adopting: fc.boolean() });
  const limitedConfig = fc.record({
    unlimitedPools: fc.subarray(['fanout', 'etl', 'default']),
    pools: fc.dictionary(pool, fc.integer({ min: 0, max: 50 })),
    rates: fc.dictionary(pool, fc.constantFrom(1, 2.5)),
  });

  test('a demand is marked limited exactly when the configuration gives its pool a number and does not name it unlimited; an uncounted one never', () => {
    fc.assert(
      fc.property(demand, limitedConfig, (d, c) => {
        const limited = c.pools[d.pool] !== undefined && !c.unlimitedPools.includes(d.pool);
        expect(configuredDemand(d, c).limited === true).toBe(limited);
        const taken = takeDemand(d, c);
        expect(taken.limited === true).toBe(limited && !taken.uncounted);
        if (taken.uncounted) expect(taken.limited).toBeUndefined();
      }),
    );
  });

  test("the limited mark goes with the receiver's pool gate only (not its keyed limits, not the giver's gates)", () => {
    fc.assert(
      fc.property(demand, demand, fc.boolean(), (from, to, limited) => {
        const receiver = { ...to, ...(limited && { limited: true }) };
        const marked = exchange({ ...from, limited: true }, receiver).filter((change) => change.limited);
        expect(marked.map((change) => change.gate)).toEqual(limited ? [to.pool] : []);
        expect(marked.every((change) => change.guarded)).toBe(true);
      }),
    );
  });

  test("an adopting counter admits no demand; a limited pool's demand is never admitted onto an unlimited pool's counter; any other is", () => {
    fc.assert(
      fc.property(counter, fc.boolean(), (c, limited) => {
        const admits = admitsOnCounter(c, { limited });
        if (c.adopting) expect(admits).toBe(false);
        else if (c.unlimited) expect(admits).toBe(!limited);
        else expect(admits).toBe(true);
      }),
    );
  });

  test('room never admits by itself: with room everywhere, a demand its pool counter does not admit is held back on its pool (never "take again")', () => {
    fc.assert(
      fc.property(demand, counter, fc.boolean(), fc.integer({ min: 0, max: 5 }), (d, c, limited, inUse) => {
        const receiver = { ...d, ...(limited && { limited: true }) };
        const gates = gatesOf(receiver);
        const counters = gates.map((gate, i) => ({ name: gate, limit: 100, inUse, ...(i === 0 && c) }));
        const blocked = blockedBy(gates, counters, receiver, 0);
        if (admitsOnCounter(c, receiver)) expect(blocked).toBeUndefined();
        else expect(blocked).toMatchObject({ gate: d.pool, missing: false, unsettled: c.adopting ? 'adopting' : 'unlimited' });
      }),
    );
  });

  test('an adopting counter is switched to an unlimited one when configured unlimited once its adoption has settled, and left adopting when configured limited', () => {
    const unlimited = { unlimitedPools: ['fanout'], pools: {} };
    expect(counterSwitch('fanout', { adopting: true, adoptingSince: T }, unlimited, T + SETTLE, SETTLE)).toBe(UNLIMITED);
    // A caller on the configuration before the deploy, within the settle time, does not undo the switch
    expect(counterSwitch('fanout', { adopting: true, adoptingSince: T }, unlimited, T + SETTLE - 1, SETTLE)).toBeUndefined();
    // Made adopting before the time was written: as settled as it will ever be
    expect(counterSwitch('fanout', { adopting: true }, unlimited, T, SETTLE)).toBe(UNLIMITED);
    expect(counterSwitch('fanout', { adopting: true, adoptingSince: T }, { pools: { fanout: 3 } }, T + SETTLE, SETTLE)).toBeUndefined();
    expect(counterSwitch('fanout', { unlimited: true }, { pools: { fanout: 3 } }, T, SETTLE)).toBe(3);
    // A counter limited (not adopting) is switched at once, whatever the time
    expect(counterSwitch('fanout', {}, unlimited, T, SETTLE)).toBe(UNLIMITED);
  });

  const adoptingSince = fc.option(fc.integer({ min: T, max: T + 2 * SETTLE }), { nil: undefined });
  const readsBeganAt = fc.option(fc.integer({ min: T, max: T + 3 * SETTLE }), { nil: undefined });

  test('adopting ends only after a run read all 16 shards whole and counted every slot it saw, its reads begun once the adoption settled', () => {
    fc.assert(
      fc.property(
        fc.boolean(),
        fc.integer({ min: 0, max: 20 }),
        fc.integer({ min: 0, max: 3 }),
        adoptingSince,
        readsBeganAt,
        (adopting, wholeShards, failed, since, began) => {
          const counter = { adopting, ...(since !== undefined && { adoptingSince: since }) };
          const pass = { wholeShards, failed, ...(began !== undefined && { readsBeganAt: began }) };
          const settled = began !== undefined && (since === undefined || began - since >= SETTLE);
          expect(adoptionDone(counter, pass, SETTLE)).toBe(adopting && wholeShards >= UNCOUNTED_HOLDER_SHARDS && failed === 0 && settled);
        },
      ),
    );
    expect(UNCOUNTED_HOLDER_SHARDS).toBe(16);
  });

  test('a take by an invocation on the configuration before the deploy, after the reads of a run begun within the settle time, is never left uncounted by an ended adoption', () => {
    // The deploy-window bound: old-configuration takes happen before adoptingSince + settle; a run that ends adopting
    // began its reads at or after that, so every such take was written before its reads (only the index lag may hide it).
    fc.assert(
      fc.property(fc.integer({ min: T, max: T + SETTLE }), fc.integer({ min: 0, max: SETTLE - 1 }), readsBeganAt, (since, late, began) => {
        const oldTakeAt = since + late;
        const pass = { wholeShards: UNCOUNTED_HOLDER_SHARDS, failed: 0, ...(began !== undefined && { readsBeganAt: began }) };
        if (adoptionDone({ adopting: true, adoptingSince: since }, pass, SETTLE)) expect(oldTakeAt).toBeLessThan(began!);
      }),
    );
  });

  test('adoptionSettled: a counter not adopting always is; an adopting one from adoptingSince + settle on', () => {
    fc.assert(
      fc.property(fc.boolean(), adoptingSince, fc.integer({ min: T, max: T + 3 * SETTLE }), (adopting, since, at) => {
        const counter = { adopting, ...(since !== undefined && { adoptingSince: since }) };
        expect(adoptionSettled(counter, at, SETTLE)).toBe(!adopting || since === undefined || at >= since + SETTLE);
      }),
    );
  });

  test('an adopting counter has no free slot for a fill (every admission onto it would be refused); any other its room', () => {
    fc.assert(
      fc.property(fc.boolean(), fc.integer({ min: 0, max: 50 }), fc.integer({ min: 0, max: 60 }), (adopting, limit, inUse) => {
        const free = freeSlots({ name: 'fanout', limit, inUse, ...(adopting && { adopting: true }) });
        expect(free).toBe(adopting ? 0 : Math.max(0, limit - inUse));
      }),
    );
  });

  test('the reconciler counts the uncounted slots of a pool the configuration gives a limit, only', () => {
    expect(adoptsUncounted('fanout', { pools: { fanout: 2 } })).toBe(true);
    expect(adoptsUncounted('fanout', { pools: {}, unlimitedPools: ['fanout'] })).toBe(false);
    expect(adoptsUncounted('fanout', { pools: { other: 1 } })).toBe(false);
  });
});
