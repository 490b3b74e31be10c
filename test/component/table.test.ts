import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { spawnEmulators, type SpawnedEmulators } from '../support/spawnEmulators';
import { createSluiceTable } from '../support/table';

let emulators: SpawnedEmulators;
beforeAll(async () => {
  emulators = await spawnEmulators();
}, 60_000);
afterAll(() => emulators.stop());

test('the table is created from serverless.yml with its (pk, sk) key', async () => {
  const dynamodb = new DynamoDBClient({ endpoint: emulators.dynamodbEndpoint, region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
  const name = await createSluiceTable(dynamodb);
  const { Table } = await dynamodb.send(new DescribeTableCommand({ TableName: name }));
  expect(Table?.KeySchema).toEqual([
    { AttributeName: 'pk', KeyType: 'HASH' },
    { AttributeName: 'sk', KeyType: 'RANGE' },
  ]);
}, 60_000);
