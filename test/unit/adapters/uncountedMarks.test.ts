import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { DynamoLeaseStore } from '../../../shared/adapters/dynamodb/leaseStore';

const client = { region: 'eu-west-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } };

test('the pools ever unlimited are read with a strongly consistent Query: a counter created now sees a mark written before', async () => {
  // No emulator tells a consistent read from an eventually consistent one: the request is what DynamoDB acts on
  // (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/HowItWorks.ReadConsistency.html).
  const doc = DynamoDBDocumentClient.from(new DynamoDBClient(client));
  const mock = mockClient(doc);
  mock.on(QueryCommand).resolves({ Items: [{ pk: 'UNCOUNTED', sk: 'fanout' }] });
  expect(await new DynamoLeaseStore(doc, 'sluice-test').uncountedPools()).toEqual(['fanout']);
  const queries = mock.commandCalls(QueryCommand).map((call) => call.args[0].input);
  expect(queries).toHaveLength(1);
  expect(queries[0]).toMatchObject({ TableName: 'sluice-test', ConsistentRead: true });
});
