import { explore } from '../../support/explore/run';
import { ADAPTER_FAMILIES, STALE_WRITERS } from '../../support/explore/families';

/**
 * Explored interleavings on the real DynamoDB adapters (test/support/explore/dynamoWorld.ts): the same services,
 * scenarios and invariants as test/unit/explore/interleavings.test.ts, but the stores are DynamoLeaseStore,
 * DynamoJobLedger and DynamoScheduleStore on dynalite, and every DynamoDB request (each attempt) is a step the scheduler
 * releases, with DynamoDB's own faults on it: every error the API reference documents (throttling, server errors before
 * and after the write applied, conflicts with transactions, transactions cancelled for capacity), answers lost after
 * the write applied, invocations dying at any request, bursts that lose every race for a counter (another
 * acquirer booking the same start rate, a transaction holding the counter), and stale writers (a write to a job record
 * held while other invocations move the job on). So the adapters' own loops interleave too.
 *
 * Slower than in memory (a request is a round trip to dynalite): few schedules per family here, SLUICE_EXPLORE_RUNS more;
 * CI's fault step runs many more (test/faults/explore.slow.test.ts); `npm run test:explore -- --engine dynalite` any number.
 * The stale writers' scenarios are small (a quarter of a second each): three times as many of them, since only some
 * hold the one write that meets another invocation's move.
 */
const RUNS = Number(process.env.SLUICE_ADAPTER_EXPLORE_RUNS ?? 8);
const SEED = Number(process.env.SLUICE_EXPLORE_SEED ?? 8);
const runsOf = (scenario: unknown) => (scenario === STALE_WRITERS ? 3 * RUNS : RUNS);

describe(`explored interleavings on the DynamoDB adapters (${RUNS} scenarios per family, ${3 * RUNS} stale writers; seed ${SEED})`, () => {
  test.each(ADAPTER_FAMILIES)(
    '%s',
    async (_name, scenario) => {
      const outcome = await explore({ runs: runsOf(scenario), seed: SEED, scenario, engine: 'dynalite' });
      if (!outcome.ok) throw new Error(`\n${outcome.text}`);
    },
    240_000,
  );
});
