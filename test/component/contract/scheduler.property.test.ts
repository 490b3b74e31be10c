import fc from 'fast-check';
import { DynamoJobLedger } from '../../../shared/adapters/dynamodb/jobLedger';
import { DynamoLeaseStore } from '../../../shared/adapters/dynamodb/leaseStore';
import { type ModelOptions, runScenario, SchedulerModel, scenarioArb } from '../../contract/scheduler.model';
import { startDynalite, useDynamoFixtures } from './dynamoFixtures';

// The scheduler model of test/unit/app/scheduler.property.test.ts, on the DynamoDB adapters against dynalite: the
// same invariants with real conditional writes. Few runs: each one gets its own table.
const fixtures = useDynamoFixtures(startDynalite);

function check(options: ModelOptions, numRuns: number, maxLength: number): Promise<void> {
  return fc.assert(
    fc.asyncProperty(scenarioArb(options, maxLength), async ({ seed, actions }) => {
      const table = await fixtures().table();
      try {
        const model = new SchedulerModel(
          new DynamoLeaseStore(fixtures().doc, table.name),
          new DynamoJobLedger(fixtures().doc, table.name),
          { ...options, seed },
        );
        await runScenario(model, actions, { deadJobsInDlq: !options.crashes });
      } finally {
        await table.drop();
      }
    }),
    { numRuns },
  );
}

// Each is CPU-bound work on dynalite (a table per scenario): more than 60 s beside a CPU-bound process. The limit is for
// a hang, not for speed.
describe('scheduler properties on DynamoDB adapters (dynalite)', () => {
  test('late, duplicated and lost messages and events, limit changes, start failures, concurrent functions', async () => {
    await check({ startFailures: true, concurrency: true }, 12, 40);
  }, 300_000);

  test('functions dying part way (known resume bug avoided, see acquirer.test.ts)', async () => {
    await check({ crashes: true, startFailures: true, concurrency: true, avoidKnownResumeBug: false }, 12, 40);
  }, 300_000);
});
