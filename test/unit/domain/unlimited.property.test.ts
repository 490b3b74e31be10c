import fc from 'fast-check';
import { exchange, gatesOf } from '../../../shared/domain/limits';
import { counterSwitch, heldDemand, takeDemand, UNLIMITED } from '../../../shared/domain/unlimited';

/** Whether a job takes counters is the stage's configuration's call, and a release gives back what the take counted. */

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
        const to = counterSwitch('fanout', marked ? { unlimited: true } : {}, config);
        if (unlimited) expect(to).toBe(marked ? undefined : UNLIMITED);
        else expect(to).toBe(marked ? limit : undefined);
        // Once: the counter as the switch leaves it needs no other.
        if (to !== undefined) expect(counterSwitch('fanout', to === UNLIMITED ? { unlimited: true } : {}, config)).toBeUndefined();
      }),
    );
  });
});
