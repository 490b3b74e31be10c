import { describeJobLedgerContract } from '../../contract/jobLedger.contract';
import { describeLeaseStoreContract } from '../../contract/leaseStore.contract';
import { spawnEmulators, type SpawnedEmulators } from '../../support/spawnEmulators';
import { DynamoFixtures } from './dynamoFixtures';

// The DynamoDB adapters against dynalite (LevelDB in memory, in a child process).
let emulators: SpawnedEmulators | undefined;
let fixtures: DynamoFixtures;

beforeAll(async () => {
  emulators = await spawnEmulators();
  fixtures = new DynamoFixtures(emulators.dynamodbEndpoint);
}, 60_000);

afterAll(async () => {
  fixtures?.destroy();
  await emulators?.stop();
});

describeLeaseStoreContract('DynamoLeaseStore on dynalite', () => fixtures.leaseStore());
describeJobLedgerContract('DynamoJobLedger on dynalite', () => fixtures.jobLedger());
