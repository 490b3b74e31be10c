import { describeJobLedgerContract } from '../../contract/jobLedger.contract';
import { describeLeaseStoreContract } from '../../contract/leaseStore.contract';
import { type DynamoDbLocal, startDynamoDbLocal } from '../../support/dynamodbLocal';
import { DynamoFixtures } from './dynamoFixtures';

// The DynamoDB adapters against the official DynamoDB Local jar (from amplify-dynamodb-simulator), in memory.
let local: DynamoDbLocal | undefined;
let fixtures: DynamoFixtures;

beforeAll(async () => {
  local = await startDynamoDbLocal({ timeoutMs: 45_000 });
  fixtures = new DynamoFixtures(local.endpoint);
}, 60_000);

afterAll(async () => {
  fixtures?.destroy();
  await local?.stop();
}, 15_000);

describeLeaseStoreContract('DynamoLeaseStore on DynamoDB Local', () => fixtures.leaseStore());
describeJobLedgerContract('DynamoJobLedger on DynamoDB Local', () => fixtures.jobLedger());
