import { CreateTableCommand, DeleteTableCommand, DescribeTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  ScanCommand,
  TransactGetCommand,
  TransactWriteCommand,
  type TransactWriteCommandInput,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { localDocumentClient, localDynamoClient } from '../../support/dynamodbLocal';

/** A local DynamoDB endpoint a test file starts and stops. */
export interface Engine {
  endpoint: string;
  stop(): Promise<void>;
}

type TransactItems = NonNullable<TransactWriteCommandInput['TransactItems']>;
type Reason = { Code?: string; Message?: string; Item?: Record<string, unknown> };

const INDEX = 'byHolderPool';
const key = (pk: string) => ({ pk, sk: 'item' });

/**
 * The same transaction cases on any engine: dynalite (with local/dynaliteTransactions) and DynamoDB Local must
 * both pass them. The table has the sparse, KEYS_ONLY `holderPool` index the lease model queries.
 */
export function describeTransactionConformance(name: string, start: () => Promise<Engine>, stopTimeoutMs?: number): void {
  describe(`transactions on ${name}`, () => {
    let engine: Engine | undefined;
    let client: DynamoDBClient;
    let doc: DynamoDBDocumentClient;
    let table: string;
    let counter = 0;

    beforeAll(async () => {
      engine = await start();
      client = localDynamoClient(engine.endpoint);
      doc = localDocumentClient(engine.endpoint);
    }, 60_000);
    afterAll(async () => {
      doc?.destroy();
      client?.destroy();
      await engine?.stop();
    }, stopTimeoutMs);
    beforeEach(async () => {
      table = `tx-${process.pid}-${counter++}`;
      await createTable(client, table);
    });
    afterEach(async () => void (await client.send(new DeleteTableCommand({ TableName: table }))));

    const put = (item: Record<string, unknown>) => doc.send(new PutCommand({ TableName: table, Item: item }));
    const get = async (pk: string) => (await doc.send(new GetCommand({ TableName: table, Key: key(pk), ConsistentRead: true }))).Item;
    const transact = (items: TransactItems) => doc.send(new TransactWriteCommand({ TransactItems: items }));
    const everything = async () => {
      const { Items = [] } = await doc.send(new ScanCommand({ TableName: table, ConsistentRead: true }));
      return Items.sort((a, b) => String(a.pk).localeCompare(String(b.pk)));
    };
    const holders = async (pool: string) => {
      const { Items = [] } = await doc.send(
        new QueryCommand({
          TableName: table,
          IndexName: INDEX,
          KeyConditionExpression: 'holderPool = :p',
          ExpressionAttributeValues: { ':p': pool },
        }),
      );
      return Items.sort((a, b) => String(a.pk).localeCompare(String(b.pk)));
    };
    const cancelled = async (items: TransactItems): Promise<Reason[]> => {
      const error = await transact(items).then(
        () => undefined,
        (e: unknown) => e as { name: string; message: string; CancellationReasons?: Reason[] },
      );
      expect(error?.name).toBe('TransactionCanceledException');
      const codes = (error!.CancellationReasons ?? []).map((reason) => reason.Code).join(', ');
      // The SDK moves the body's `Message` to error.message (and drops `Message`); reasons' Items stay AttributeValues,
      // even through the document client.
      expect(error!.message).toBe(`Transaction cancelled, please refer cancellation reasons for specific reasons [${codes}]`);
      return error!.CancellationReasons!;
    };
    const increment = (pk: string, by = 1) => ({
      Update: { TableName: table, Key: key(pk), UpdateExpression: 'ADD n :by', ExpressionAttributeValues: { ':by': by } },
    });

    test('a 2-item and a 3-item transaction are applied, and the index follows', async () => {
      await transact([
        { Put: { TableName: table, Item: { ...key('h1'), holderPool: 'p' } } },
        { Put: { TableName: table, Item: { ...key('pool'), inUse: 1 } } },
      ]);
      expect(await holders('p')).toEqual([{ ...key('h1'), holderPool: 'p' }]);
      await transact([
        { Put: { TableName: table, Item: { ...key('h2'), holderPool: 'p', spec: 'x' } } },
        { Update: { TableName: table, Key: key('h1'), UpdateExpression: 'REMOVE holderPool' } },
        {
          Update: {
            TableName: table,
            Key: key('pool'),
            UpdateExpression: 'SET inUse = inUse + :one',
            ExpressionAttributeValues: { ':one': 1 },
          },
        },
      ]);
      expect(await everything()).toEqual([key('h1'), { ...key('h2'), holderPool: 'p', spec: 'x' }, { ...key('pool'), inUse: 2 }]);
      // Sparse and KEYS_ONLY: h1 left the index, h2 is there with its keys only.
      expect(await holders('p')).toEqual([{ ...key('h2'), holderPool: 'p' }]);
    });

    test('one failing condition cancels all: nothing changes, every item has its reason, ALL_OLD returns the item', async () => {
      await put({ ...key('a'), n: 1, holderPool: 'p' });
      await put({ ...key('b'), n: 2 });
      const before = await everything();
      const reasons = await cancelled([
        {
          Update: {
            TableName: table,
            Key: key('a'),
            UpdateExpression: 'SET n = :five REMOVE holderPool',
            ExpressionAttributeValues: { ':five': 5 },
          },
        },
        { Put: { TableName: table, Item: { ...key('c'), holderPool: 'p' } } },
        {
          Delete: {
            TableName: table,
            Key: key('b'),
            ConditionExpression: 'n = :other',
            ExpressionAttributeValues: { ':other': 99 },
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          },
        },
        // An item that does not exist: no Item even with ALL_OLD.
        {
          ConditionCheck: {
            TableName: table,
            Key: key('d'),
            ConditionExpression: 'attribute_exists(pk)',
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          },
        },
      ]);
      expect(reasons).toEqual([
        { Code: 'None' },
        { Code: 'None' },
        {
          Code: 'ConditionalCheckFailed',
          Message: 'The conditional request failed',
          Item: { pk: { S: 'b' }, sk: { S: 'item' }, n: { N: '2' } },
        },
        { Code: 'ConditionalCheckFailed', Message: expect.stringMatching(/^The conditional request failed\.?$/) },
      ]);
      expect(await everything()).toEqual(before);
      expect(await holders('p')).toEqual([{ ...key('a'), holderPool: 'p' }]);
    });

    test('a failing condition without ALL_OLD returns no item', async () => {
      await put({ ...key('a'), n: 1 });
      const reasons = await cancelled([
        { Put: { TableName: table, Item: { ...key('a'), n: 7 }, ConditionExpression: 'attribute_not_exists(pk)' } },
        increment('b'),
      ]);
      expect(reasons).toEqual([{ Code: 'ConditionalCheckFailed', Message: 'The conditional request failed' }, { Code: 'None' }]);
      expect(await everything()).toEqual([{ ...key('a'), n: 1 }]);
    });

    test('a ConditionCheck that passes writes nothing, neither on an item nor where there is none', async () => {
      await put({ ...key('a'), n: 1, holderPool: 'p' });
      await transact([
        { ConditionCheck: { TableName: table, Key: key('a'), ConditionExpression: 'n = :one', ExpressionAttributeValues: { ':one': 1 } } },
        { ConditionCheck: { TableName: table, Key: key('ghost'), ConditionExpression: 'attribute_not_exists(pk)' } },
        { Put: { TableName: table, Item: { ...key('c'), holderPool: 'p' } } },
      ]);
      expect(await everything()).toEqual([
        { ...key('a'), n: 1, holderPool: 'p' },
        { ...key('c'), holderPool: 'p' },
      ]);
      expect(await holders('p')).toEqual([
        { ...key('a'), holderPool: 'p' },
        { ...key('c'), holderPool: 'p' },
      ]);
    });

    test('a ConditionCheck that fails cancels the transaction and writes nothing', async () => {
      await put({ ...key('a'), n: 1 });
      const reasons = await cancelled([
        {
          ConditionCheck: {
            TableName: table,
            Key: key('a'),
            ConditionExpression: 'n > :big',
            ExpressionAttributeValues: { ':big': 10 },
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          },
        },
        { Put: { TableName: table, Item: { ...key('c'), holderPool: 'p' } } },
      ]);
      expect(reasons).toEqual([
        {
          Code: 'ConditionalCheckFailed',
          Message: expect.stringMatching(/^The conditional request failed\.?$/),
          Item: { pk: { S: 'a' }, sk: { S: 'item' }, n: { N: '1' } },
        },
        { Code: 'None' },
      ]);
      expect(await everything()).toEqual([{ ...key('a'), n: 1 }]);
      expect(await holders('p')).toEqual([]);
    });

    test('an ADD on a counter, a Put if absent and a Delete under a condition, together', async () => {
      await put({ ...key('pool'), inUse: 1, limit: 2 });
      await put({ ...key('h1'), holderPool: 'p' });
      const take = (holder: string, leaving: string): TransactItems => [
        {
          Update: {
            TableName: table,
            Key: key('pool'),
            UpdateExpression: 'ADD inUse :one',
            ConditionExpression: 'inUse < #limit',
            ExpressionAttributeNames: { '#limit': 'limit' },
            ExpressionAttributeValues: { ':one': 1 },
          },
        },
        { Put: { TableName: table, Item: { ...key(holder), holderPool: 'p' }, ConditionExpression: 'attribute_not_exists(pk)' } },
        {
          Delete: { TableName: table, Key: key(leaving), ConditionExpression: 'holderPool = :p', ExpressionAttributeValues: { ':p': 'p' } },
        },
      ];
      await transact(take('h2', 'h1'));
      expect(await get('pool')).toEqual({ ...key('pool'), inUse: 2, limit: 2 });
      expect(await holders('p')).toEqual([{ ...key('h2'), holderPool: 'p' }]);
      // Now the pool is full and h1 is gone: the counter's and the Delete's conditions fail, the Put's passes.
      expect((await cancelled(take('h3', 'h1'))).map((reason) => reason.Code)).toEqual([
        'ConditionalCheckFailed',
        'None',
        'ConditionalCheckFailed',
      ]);
      expect(await everything()).toEqual([
        { ...key('h2'), holderPool: 'p' },
        { ...key('pool'), inUse: 2, limit: 2 },
      ]);
    });

    test('two operations on one item, an empty list and more than 100 items are rejected', async () => {
      const rejection = (promise: Promise<unknown>) =>
        promise.then(
          () => undefined,
          (e: unknown) => e as Error,
        );
      const twice = await rejection(transact([{ Put: { TableName: table, Item: { ...key('a'), n: 1 } } }, increment('a')]));
      expect(twice).toMatchObject({
        name: 'ValidationException',
        message: 'Transaction request cannot include multiple operations on one item',
      });
      const readTwice = await rejection(
        doc.send(
          new TransactGetCommand({
            TransactItems: [{ Get: { TableName: table, Key: key('a') } }, { Get: { TableName: table, Key: key('a') } }],
          }),
        ),
      );
      expect(readTwice).toMatchObject({
        name: 'ValidationException',
        message: 'Transaction request cannot include multiple operations on one item',
      });
      expect(await rejection(transact([]))).toMatchObject({ name: 'ValidationException' });
      const many = (n: number): TransactItems => Array.from({ length: n }, (_, i) => ({ Put: { TableName: table, Item: key(`m${i}`) } }));
      expect(await rejection(transact(many(101)))).toMatchObject({ name: 'ValidationException' });
      expect(await everything()).toEqual([]);
      await transact(many(100));
      expect(await everything()).toHaveLength(100);
    });

    test('an invalid item fails the whole request before anything is written', async () => {
      const error = await transact([
        { Put: { TableName: table, Item: key('a') } },
        {
          Update: {
            TableName: table,
            Key: key('b'),
            UpdateExpression: 'ADD n :one',
            ExpressionAttributeValues: { ':one': 1, ':unused': 2 },
          },
        },
      ]).then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(error).toMatchObject({
        name: 'ValidationException',
        message: 'Value provided in ExpressionAttributeValues unused in expressions: keys: {:unused}',
      });
      const missing = await transact([{ Put: { TableName: `${table}-none`, Item: key('a') } }]).then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(missing?.name).toBe('ResourceNotFoundException');
      expect(await everything()).toEqual([]);
    });

    test('a plain conditional write that fails returns the item with ReturnValuesOnConditionCheckFailure ALL_OLD', async () => {
      await put({ ...key('a'), n: 1 });
      const attempt = (input: Record<string, unknown>) =>
        doc
          .send(
            new UpdateCommand({
              TableName: table,
              UpdateExpression: 'ADD n :one',
              ExpressionAttributeValues: { ':one': 1 },
              ...input,
            } as never),
          )
          .then(
            () => undefined,
            (e: unknown) => e as { name: string; Item?: unknown },
          );
      const full = { Key: key('a'), ConditionExpression: 'n > :one', ReturnValuesOnConditionCheckFailure: 'ALL_OLD' };
      expect(await attempt(full)).toMatchObject({
        name: 'ConditionalCheckFailedException',
        Item: { pk: { S: 'a' }, sk: { S: 'item' }, n: { N: '1' } },
      });
      expect((await attempt({ ...full, ReturnValuesOnConditionCheckFailure: 'NONE' }))?.Item).toBeUndefined();
      expect(
        (
          await attempt({
            ...full,
            Key: key('none'),
            ConditionExpression: 'attribute_exists(pk)',
            ExpressionAttributeValues: { ':one': 1 },
          })
        )?.Item,
      ).toBeUndefined();
      expect(await get('a')).toEqual({ ...key('a'), n: 1 });
    });

    test('TransactGetItems reads items, an empty answer for a missing one, with projections', async () => {
      await put({ ...key('a'), n: 1, holderPool: 'p' });
      const { Responses } = await doc.send(
        new TransactGetCommand({
          TransactItems: [{ Get: { TableName: table, Key: key('a') } }, { Get: { TableName: table, Key: key('none') } }],
        }),
      );
      expect(Responses).toEqual([{ Item: { ...key('a'), n: 1, holderPool: 'p' } }, {}]);
      const projected = await doc.send(
        new TransactGetCommand({
          TransactItems: [
            { Get: { TableName: table, Key: key('a'), ProjectionExpression: '#h', ExpressionAttributeNames: { '#h': 'holderPool' } } },
          ],
        }),
      );
      expect(projected.Responses).toEqual([{ Item: { holderPool: 'p' } }]);
    });

    test('50 concurrent increments guarded by inUse < limit, half in transactions, end at the limit with no update lost', async () => {
      // A transaction takes a holder item too; 25 transactions share 8 holder keys, so some increment the counter and
      // are then cancelled by their Put: undoing that increment must not undo anyone else's.
      await put({ ...key('pool'), inUse: 0, limit: 20 });
      const guarded = {
        TableName: table,
        Key: key('pool'),
        UpdateExpression: 'ADD inUse :one',
        ConditionExpression: 'inUse < #limit',
        ExpressionAttributeNames: { '#limit': 'limit' },
        ExpressionAttributeValues: { ':one': 1 },
      };
      const outcomes = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          untilNoConflict<unknown>(() =>
            i % 2 === 0
              ? transact([
                  { Update: guarded },
                  {
                    Put: {
                      TableName: table,
                      Item: { ...key(`h${i % 8}`), holderPool: 'p' },
                      ConditionExpression: 'attribute_not_exists(pk)',
                    },
                  },
                ])
              : doc.send(new UpdateCommand(guarded)),
          ).then(
            () => ({ ok: true as const, i }),
            (error: { name: string; CancellationReasons?: Reason[] }) => ({ ok: false as const, i, error }),
          ),
        ),
      );
      const succeeded = outcomes.filter((outcome) => outcome.ok);
      expect(succeeded).toHaveLength(20);
      for (const outcome of outcomes) {
        if (outcome.ok) continue;
        if (outcome.i % 2 === 1) expect(outcome.error.name).toBe('ConditionalCheckFailedException');
        else expect(outcome.error.CancellationReasons?.map((reason) => reason.Code)).toContain('ConditionalCheckFailed');
      }
      expect(await get('pool')).toEqual({ ...key('pool'), inUse: 20, limit: 20 });
      const holderKeys = succeeded.filter((outcome) => outcome.i % 2 === 0).map((outcome) => `h${outcome.i % 8}`);
      expect((await holders('p')).map((item) => item.pk).sort()).toEqual(holderKeys.sort());
    });

    test('a cancelled transaction racing plain updates of the same item never undoes them', async () => {
      await put({ ...key('x'), n: 0 });
      const failing: TransactItems = [
        increment('x', 100),
        { ConditionCheck: { TableName: table, Key: key('absent'), ConditionExpression: 'attribute_exists(pk)' } },
      ];
      const results = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          i % 2 === 0
            ? untilNoConflict(() => transact(failing)).then(
                () => 'applied',
                (e: { CancellationReasons?: Reason[] }) => e.CancellationReasons?.map((reason) => reason.Code).join(),
              )
            : untilNoConflict(() => doc.send(new UpdateCommand({ ...increment('x').Update }))).then(() => 'incremented'),
        ),
      );
      expect(results.filter((result) => result === 'incremented')).toHaveLength(20);
      expect(results.filter((result) => result === 'None,ConditionalCheckFailed')).toHaveLength(20);
      expect(await get('x')).toEqual({ ...key('x'), n: 20 });
    });

    test('transfers in transactions, plain deposits on the same item and transactional reads stay consistent', async () => {
      // Invariant: a.n + b.n = 100 + a.deposits, in every transactional read and at the end.
      await put({ ...key('a'), n: 100, deposits: 0 });
      await put({ ...key('b'), n: 0 });
      const transfer: TransactItems = [
        {
          Update: {
            TableName: table,
            Key: key('a'),
            UpdateExpression: 'ADD n :minus',
            ConditionExpression: 'n >= :one',
            ExpressionAttributeValues: { ':minus': -1, ':one': 1 },
          },
        },
        increment('b'),
      ];
      const deposit = new UpdateCommand({
        TableName: table,
        Key: key('a'),
        UpdateExpression: 'ADD n :one, deposits :one',
        ExpressionAttributeValues: { ':one': 1 },
      });
      const read = new TransactGetCommand({
        TransactItems: [{ Get: { TableName: table, Key: key('a') } }, { Get: { TableName: table, Key: key('b') } }],
      });
      const reads: Array<{ a: number; b: number; deposits: number }> = [];
      await Promise.all(
        Array.from({ length: 90 }, async (_, i) => {
          if (i % 3 === 0) return untilNoConflict(() => transact(transfer));
          if (i % 3 === 1) return untilNoConflict(() => doc.send(deposit));
          const { Responses = [] } = await untilNoConflict(() => doc.send(read));
          reads.push({ a: Responses[0]!.Item!.n, b: Responses[1]!.Item!.n, deposits: Responses[0]!.Item!.deposits });
        }),
      );
      expect(reads).toHaveLength(30);
      for (const seen of reads) expect(seen.a + seen.b).toBe(100 + seen.deposits);
      expect(await get('a')).toEqual({ ...key('a'), n: 100, deposits: 30 });
      expect(await get('b')).toEqual({ ...key('b'), n: 30 });
    });
  });
}

/**
 * DynamoDB cancels a transaction that meets another one in flight on the same item (TransactionConflict) and fails a
 * plain write that does (TransactionConflictException); the SDK retries neither, so a client must, as the tests do.
 * Neither local engine answers them (DynamoDB Local 3.3 never did in these races; the dynalite shim makes requests wait
 * for each other's locks), so nothing local exercises that path.
 */
export async function untilNoConflict<T>(operation: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await operation();
    } catch (error) {
      const { name, CancellationReasons } = error as { name?: string; CancellationReasons?: Reason[] };
      const conflict =
        name === 'TransactionConflictException' || Boolean(CancellationReasons?.some((reason) => reason.Code === 'TransactionConflict'));
      if (!conflict || attempt >= 100) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 20));
    }
  }
}

/** A table with the lease model's shape: pk/sk, and a sparse KEYS_ONLY index on holderPool. Resolves once it is ACTIVE. */
export async function createTable(client: DynamoDBClient, name: string): Promise<void> {
  await client.send(
    new CreateTableCommand({
      TableName: name,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [
        { AttributeName: 'pk', AttributeType: 'S' },
        { AttributeName: 'sk', AttributeType: 'S' },
        { AttributeName: 'holderPool', AttributeType: 'S' },
      ],
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
      GlobalSecondaryIndexes: [
        { IndexName: INDEX, KeySchema: [{ AttributeName: 'holderPool', KeyType: 'HASH' }], Projection: { ProjectionType: 'KEYS_ONLY' } },
      ],
    }),
  );
  // dynalite answers CreateTable with the table and its index CREATING, even with createTableMs 0.
  const deadline = Date.now() + 10_000;
  for (;;) {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: name }));
    if (Table?.TableStatus === 'ACTIVE' && (Table.GlobalSecondaryIndexes ?? []).every((index) => index.IndexStatus === 'ACTIVE')) return;
    if (Date.now() > deadline) throw new Error(`table ${name} not ACTIVE after 10 s`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
