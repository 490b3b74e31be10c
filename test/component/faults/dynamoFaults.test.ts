import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoFault, type DynamoFaultPolicy, installDynamoFaults, randomFaults } from '../../../local/faults/dynamoFaults';
import { startDynalite, type LocalDynamoDb } from '../contract/dynamoFixtures';
import { LOCAL_CREDENTIALS, localDocumentClient } from '../../support/dynamodbLocal';

// The fault layer against a real engine (dynalite): each fault comes back as the SDK's own exception class, retried by
// the SDK exactly when it would retry DynamoDB's answer, and writes meeting a transaction in flight are refused.

let local: LocalDynamoDb;
let doc: DynamoDBDocumentClient;
let table = 0;

beforeAll(async () => {
  local = await startDynalite();
  doc = localDocumentClient(local.endpoint);
}, 60_000);
afterAll(async () => {
  doc.destroy();
  await local.stop();
});

async function freshTable(): Promise<string> {
  const name = `faults-${table++}`;
  await (doc as unknown as { send: DynamoDBClient['send'] }).send(
    new CreateTableCommand({
      TableName: name,
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
      AttributeDefinitions: [
        { AttributeName: 'pk', AttributeType: 'S' },
        { AttributeName: 'sk', AttributeType: 'S' },
        { AttributeName: 'group', AttributeType: 'S' },
      ],
      // An index by `group`, as the holders index lists a pool's slots
      GlobalSecondaryIndexes: [
        { IndexName: 'byGroup', KeySchema: [{ AttributeName: 'group', KeyType: 'HASH' }], Projection: { ProjectionType: 'KEYS_ONLY' } },
      ],
      BillingMode: 'PAY_PER_REQUEST',
    }),
  );
  return name;
}

/** The SDK's own default retry strategy (its waits included): what is shown here is how the SDK itself takes each answer. */
function sdkDefaultClient(): DynamoDBDocumentClient {
  return DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: local.endpoint, region: 'us-east-1', credentials: LOCAL_CREDENTIALS }));
}

/** A client with the layer and a policy faulting the first attempt of each request with `fault`. */
function faulty(fault: DynamoFault) {
  const client = sdkDefaultClient();
  const policy: DynamoFaultPolicy = (request) => (request.attempt === 1 ? fault : undefined);
  const layer = installDynamoFaults(client, { policy });
  return { client, layer };
}

const bump = (TableName: string) =>
  new UpdateCommand({ TableName, Key: { pk: 'a', sk: 'a' }, UpdateExpression: 'ADD n :one', ExpressionAttributeValues: { ':one': 1 } });
const count = async (TableName: string) =>
  (await doc.send(new GetCommand({ TableName, Key: { pk: 'a', sk: 'a' }, ConsistentRead: true }))).Item?.n;

test('throttling and a server error before the write: the SDK retries, the write applies once', async () => {
  for (const fault of [DynamoFault.Throttle, DynamoFault.ServerError]) {
    const name = await freshTable();
    const { client, layer } = faulty(fault);
    const out = await client.send(bump(name));
    expect(out.$metadata.attempts).toBe(2);
    expect(await count(name)).toBe(1);
    expect(layer.counts()[fault]).toBe(1);
    client.destroy();
  }
});

test('a server error or a lost answer after the write applied: the SDK retries, and the retry applies again', async () => {
  for (const fault of [DynamoFault.ServerErrorApplied, DynamoFault.LostAnswer]) {
    const name = await freshTable();
    const { client } = faulty(fault);
    await client.send(bump(name));
    expect(await count(name)).toBe(2); // an unconditional ADD applied twice: why every Sluice write is conditional
    client.destroy();
  }
});

test('a conflict: TransactionConflictException for a single write, a cancelled transaction; neither retried by the SDK', async () => {
  const name = await freshTable();
  const { client } = faulty(DynamoFault.Conflict);
  await expect(client.send(bump(name))).rejects.toMatchObject({ name: 'TransactionConflictException', $metadata: { attempts: 1 } });
  await expect(
    client.send(new TransactWriteCommand({ TransactItems: [{ Put: { TableName: name, Item: { pk: 'b', sk: 'b' } } }] })),
  ).rejects.toMatchObject({ name: 'TransactionCanceledException', CancellationReasons: [{ Code: 'TransactionConflict' }] });
  expect(await count(name)).toBeUndefined();
  client.destroy();
});

test('a write to an item a transaction holds in flight is rejected (natural conflict)', async () => {
  const name = await freshTable();
  const client = localDocumentClient(local.endpoint);
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  // Holds the transaction in flight (as a slow network would) until the single write has been answered.
  const layer = installDynamoFaults(client);
  const hold = (next: (a: unknown) => Promise<unknown>, context: { commandName?: string }) => async (args: unknown) => {
    if (context.commandName === 'TransactWriteItemsCommand') await gate;
    return next(args);
  };
  client.middlewareStack.add(hold as never, { step: 'deserialize', name: 'holdTransaction', priority: 'low' } as never);
  const transaction = client.send(
    new TransactWriteCommand({ TransactItems: [{ Put: { TableName: name, Item: { pk: 'a', sk: 'a', n: 10 } } }] }),
  );
  await new Promise((resolve) => setImmediate(resolve));
  await expect(client.send(bump(name))).rejects.toMatchObject({ name: 'TransactionConflictException' });
  await expect(
    client.send(new TransactWriteCommand({ TransactItems: [{ Put: { TableName: name, Item: { pk: 'a', sk: 'a', n: 20 } } }] })),
  ).rejects.toMatchObject({ name: 'TransactionCanceledException', CancellationReasons: [{ Code: 'TransactionConflict' }] });
  release();
  await transaction;
  await client.send(bump(name)); // free again
  expect(await count(name)).toBe(11);
  expect(layer.counts()['natural-conflict']).toBe(2);
  client.destroy();
});

test('randomFaults never faults one item more than maxInARow times in a row', () => {
  const policy = randomFaults({ seed: 7, rate: 1, maxInARow: 2 });
  const request = { operation: 'UpdateItem', input: {}, attempt: 1, items: ['t|a|a'], writes: true };
  const faults = Array.from({ length: 9 }, () => policy(request));
  expect(faults.map((f) => (f ? 'x' : '.')).join('')).toBe('xx.xx.xx.');
});

test('PutItem through the layer with no policy and nothing in flight is untouched', async () => {
  const name = await freshTable();
  const client = localDocumentClient(local.endpoint);
  const layer = installDynamoFaults(client);
  await client.send(new PutCommand({ TableName: name, Item: { pk: 'a', sk: 'a', n: 5 } }));
  expect(await count(name)).toBe(5);
  expect(layer.counts()).toEqual({});
  client.destroy();
});

test('index reads that lag: a Query of an index may get the answer the same query got a moment ago; the table stays read as written', async () => {
  const name = await freshTable();
  const client = localDocumentClient(local.endpoint);
  let now = 1_000_000;
  const clock = jest.spyOn(Date, 'now').mockImplementation(() => now);
  try {
    const layer = installDynamoFaults(client, { staleIndexReads: { rate: 1, seed: 3, maxAgeMs: 2_000 } });
    const members = async () =>
      (
        (
          await client.send(
            new QueryCommand({
              TableName: name,
              IndexName: 'byGroup',
              KeyConditionExpression: '#g = :g',
              ExpressionAttributeNames: { '#g': 'group' },
              ExpressionAttributeValues: { ':g': 'g1' },
            }),
          )
        ).Items ?? []
      )
        .map((item) => item.pk)
        .sort();
    await client.send(new PutCommand({ TableName: name, Item: { pk: 'a', sk: 'a', group: 'g1' } }));
    expect(await members()).toEqual(['a']); // no earlier answer: read fresh, and kept
    await client.send(new PutCommand({ TableName: name, Item: { pk: 'b', sk: 'b', group: 'g1' } }));
    // Act + Assess: within maxAgeMs, the earlier answer (b not listed yet), while the table itself has b
    now += 1_500;
    expect(await members()).toEqual(['a']);
    expect((await client.send(new GetCommand({ TableName: name, Key: { pk: 'b', sk: 'b' } }))).Item).toBeDefined();
    expect(layer.counts()['stale-index-read']).toBe(1);
    // Past maxAgeMs since the answer was kept: fresh again
    now += 1_000;
    expect(await members()).toEqual(['a', 'b']);
    expect(layer.counts()['stale-index-read']).toBe(1);
  } finally {
    clock.mockRestore();
    client.destroy();
  }
});
