import { explore } from '../support/explore/run';
import { ADAPTER_FAMILIES, FAMILIES } from '../support/explore/families';

/**
 * The explorer's long runs, in CI's fault step (`npm run test:faults`): the families of
 * test/unit/explore/interleavings.test.ts (in memory) and test/component/explore/adapterInterleavings.test.ts (the
 * DynamoDB adapters on dynalite) with many more schedules than `npm test` runs, from another seed, so each CI run
 * explores schedules `npm test` never does. SLUICE_EXPLORE_LONG_RUNS / SLUICE_EXPLORE_LONG_SEED change them.
 */
const MEMORY_RUNS = Number(process.env.SLUICE_EXPLORE_LONG_RUNS ?? 600);
const ADAPTER_RUNS = Math.ceil(MEMORY_RUNS / 15);
const SEED = Number(process.env.SLUICE_EXPLORE_LONG_SEED ?? 2026);

describe(`explored interleavings, long (${MEMORY_RUNS} in memory, ${ADAPTER_RUNS} on the DynamoDB adapters per family; seed ${SEED})`, () => {
  test.each(FAMILIES)(
    'in memory: %s',
    async (_name, scenario) => {
      const runs = scenario.flowControl ? Math.ceil(MEMORY_RUNS / 2) : MEMORY_RUNS;
      const outcome = await explore({ runs, seed: SEED, scenario });
      if (!outcome.ok) throw new Error(`\n${outcome.text}`);
    },
    600_000,
  );

  test.each(ADAPTER_FAMILIES)(
    'on the DynamoDB adapters: %s',
    async (_name, scenario) => {
      const outcome = await explore({ runs: ADAPTER_RUNS, seed: SEED, scenario, engine: 'dynalite' });
      if (!outcome.ok) throw new Error(`\n${outcome.text}`);
    },
    600_000,
  );
});
