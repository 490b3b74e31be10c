import { CreateQueueCommand, ReceiveMessageCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { spawnEmulators, type SpawnedEmulators } from '../support/spawnEmulators';

let emulators: SpawnedEmulators;
beforeAll(async () => {
  emulators = await spawnEmulators();
});
afterAll(() => emulators.stop());

const creds = { accessKeyId: 'local', secretAccessKey: 'local' };

test('the spawned emulators answer real SDK calls on loopback', async () => {
  const sqs = new SQSClient({ endpoint: emulators.sqsEndpoint, region: 'us-east-1', credentials: creds });
  const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: 'probe' }));
  await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'hello' }));
  const got = await sqs.send(new ReceiveMessageCommand({ QueueUrl, WaitTimeSeconds: 1 }));
  expect(got.Messages?.[0]?.Body).toBe('hello');
  const ddb = new DynamoDBClient({ endpoint: emulators.dynamodbEndpoint, region: 'us-east-1', credentials: creds });
  expect((await ddb.send(new ListTablesCommand({}))).TableNames).toEqual([]);
  expect(emulators.sqsEndpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
});
