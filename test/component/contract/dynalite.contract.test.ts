import { type DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { POOL_REGISTRY_PK } from '../../../shared/adapters/dynamodb/keys';
import { DynamoLeaseStore } from '../../../shared/adapters/dynamodb/leaseStore';
import { describeJobLedgerContract } from '../../contract/jobLedger.contract';
import { describeLeaseStoreContract } from '../../contract/leaseStore.contract';
import { startDynalite, useDynamoFixtures } from './dynamoFixtures';

// The DynamoDB adapters against dynalite (LevelDB in memory, in a child process).
const fixtures = useDynamoFixtures(startDynalite);

describeLeaseStoreContract('DynamoLeaseStore on dynalite', () => fixtures().leaseStore());
describeJobLedgerContract('DynamoJobLedger on dynalite', () => fixtures().jobLedger());

describe('DynamoLeaseStore specifics (dynalite)', () => {
  /** A document client that fails the first write of the pool registry, as if the function died right there. */
  function failingFirstRegistryPut(doc: DynamoDBDocumentClient): DynamoDBDocumentClient {
    let failed = false;
    return new Proxy(doc, {
      get(target, prop, receiver) {
        if (prop !== 'send') return Reflect.get(target, prop, receiver);
        return (command: unknown) => {
          if (!failed && command instanceof PutCommand && command.input.Item?.pk === POOL_REGISTRY_PK) {
            failed = true;
            return Promise.reject(new Error('function timed out'));
          }
          return target.send(command as PutCommand);
        };
      },
    });
  }

  // BUG (shared/adapters/dynamodb/leaseStore.ts createPool): the pool item and its registry entry are two writes, and
  // the registry entry is written only by the call that created the pool. If that call dies in between, every later
  // createPool answers "exists" and never registers it: listPools (so the reconciler and `pool list`) never sees the
  // pool, and its lost events and leaked slots are never repaired. Fix: register on the "already exists" path too
  // (the registry Put is idempotent), or write both in one TransactWriteItems (not on dynalite), or register first.
  test('a pool whose creation died between its two writes still gets listed once it is used again', async () => {
    // Prepare
    const table = await fixtures().table();
    try {
      const dying = new DynamoLeaseStore(failingFirstRegistryPut(fixtures().doc), table.name);
      await expect(dying.createPool('etl', 2)).rejects.toThrow('function timed out');
      const store = new DynamoLeaseStore(fixtures().doc, table.name);
      // Act: the acquirer of the next job of that pool creates it again (Acquirer.createConfiguredPool)
      await store.createPool('etl', 2);
      // Assess
      expect(await store.listPools()).toContain('etl');
    } finally {
      await table.drop();
    }
  });
});
