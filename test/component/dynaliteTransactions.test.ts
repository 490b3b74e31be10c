import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { type ControlledEmulators, spawnControlledEmulators } from '../support/controlledEmulators';
import { localDocumentClient, localDynamoClient } from '../support/dynamodbLocal';
import { spawnEmulators } from '../support/spawnEmulators';
import { createTable, describeTransactionConformance } from './transactions/conformance';

// dynalite with local/dynaliteTransactions, as the project starts it: startEmulators in the emulators' child
// process (local/emulatorsMain.ts), so these cases also show the shim is active there.
describeTransactionConformance('dynalite', async () => {
  const emulators = await spawnEmulators();
  return { endpoint: emulators.dynamodbEndpoint, stop: () => emulators.stop() };
});

describe('the dynalite shim across an emulator restart (local/faults/controlledEmulatorsMain.ts)', () => {
  let emulators: ControlledEmulators;
  beforeAll(async () => {
    emulators = await spawnControlledEmulators();
  }, 60_000);
  afterAll(() => emulators.stop());

  test('transactions still work once the listener is back', async () => {
    const client = localDynamoClient(emulators.dynamodbEndpoint);
    const doc = localDocumentClient(emulators.dynamodbEndpoint);
    const put = (pk: string, ConditionExpression?: string) => ({
      Put: { TableName: 'restart', Item: { pk, sk: 'item' }, ConditionExpression },
    });
    try {
      await createTable(client, 'restart');
      await emulators.restart('dynamodb', { downMs: 100 });
      await doc.send(new TransactWriteCommand({ TransactItems: [put('a'), put('b')] }));
      const error = await doc
        .send(new TransactWriteCommand({ TransactItems: [put('a', 'attribute_not_exists(pk)')] }))
        .catch((e: unknown) => e);
      expect(error).toMatchObject({ name: 'TransactionCanceledException', CancellationReasons: [{ Code: 'ConditionalCheckFailed' }] });
    } finally {
      doc.destroy();
      client.destroy();
    }
  });
});
