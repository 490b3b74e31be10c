import type { IncomingHttpHeaders, IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { crc32 } from 'node:zlib';

/**
 * TransactWriteItems and TransactGetItems for dynalite, which has neither, so the adapters run unchanged on dynalite and
 * on DynamoDB Local. The server's request listener is replaced by one that answers the two operations itself, through
 * dynalite's own single-item operations, and passes everything else on to dynalite.
 *
 * Atomicity and isolation come from per-item locks (table + key): every GetItem, PutItem, UpdateItem, DeleteItem and
 * every item of a BatchGetItem or BatchWriteItem holds its item's lock until dynalite has answered; a transaction takes
 * all its items' locks (in sorted order, so never a deadlock), applies its writes one by one and, if a condition fails,
 * puts back the old images before it answers. Query and Scan take no lock, so they can see a transaction half applied
 * (or applied and undone): Sluice never relies on a Query seeing a transaction atomically.
 *
 * While it is there, it also adds what dynalite leaves out of a failed conditional PutItem, UpdateItem or DeleteItem:
 * the item, when the request asks ReturnValuesOnConditionCheckFailure ALL_OLD.
 *
 * Not modelled: ClientRequestToken (idempotency for 10 minutes; ignored), ConsumedCapacity and ItemCollectionMetrics
 * (never returned), TransactionConflict (transactions wait for each other's locks instead of cancelling).
 */
export function withTransactions(server: Server): Server {
  const listeners = server.listeners('request') as RequestListener[];
  if (listeners.length !== 1) throw new Error(`expected dynalite's one request listener, found ${listeners.length}`);
  server.removeAllListeners('request');
  server.on('request', new TransactionShim(listeners[0]!).listener);
  return server;
}

type AttributeValue = Record<string, unknown>;
type Item = Record<string, AttributeValue>;
type Request = Record<string, unknown>;

/** An HTTP answer: dynalite's (with the headers it set), or the shim's own. A class, so `instanceof` tells it from an item. */
class Answer {
  constructor(
    readonly status: number,
    readonly body: string,
    readonly headers?: Record<string, string | number>,
  ) {}
}

/** One write of a transaction, ready to send: `key` is the item's key attributes, `lock` the name of its lock. */
interface Write {
  kind: 'ConditionCheck' | 'Put' | 'Delete' | 'Update';
  request: Request;
  table: string;
  key: Item;
  lock: string;
  /** ReturnValuesOnConditionCheckFailure: ALL_OLD. */
  returnOld: boolean;
}

interface Reason {
  Code: 'None' | 'ConditionalCheckFailed';
  Message?: string;
  Item?: Item;
}

const TARGET = 'DynamoDB_20120810.';
const LOCKED = new Set(['GetItem', 'PutItem', 'UpdateItem', 'DeleteItem', 'BatchGetItem', 'BatchWriteItem']);
const WRITE_KINDS = ['ConditionCheck', 'Put', 'Delete', 'Update'] as const;
/** DynamoDB's limit since 2022 (it was 25). */
const MAX_ITEMS = 100;

class TransactionShim {
  private readonly locks = new KeyLocks();
  /** Key attribute names per table (a PutItem names its item by them); dropped when the table is deleted. */
  private readonly keySchemas = new Map<string, Promise<string[] | Answer>>();

  constructor(private readonly dynalite: RequestListener) {}

  readonly listener: RequestListener = (req, res) => {
    const target = String(req.headers['x-amz-target'] ?? '');
    const operation = target.startsWith(TARGET) ? target.slice(TARGET.length) : '';
    if (!LOCKED.has(operation) && !operation.startsWith('Transact') && operation !== 'DeleteTable') return this.dynalite(req, res);
    this.handle(operation, req)
      .catch((error: unknown) => json(500, { __type: 'com.amazonaws.dynamodb.v20120810#InternalServerError', message: String(error) }))
      .then((answer) => reply(res, answer))
      .catch(() => undefined); // the client is gone
  };

  private async handle(operation: string, req: IncomingMessage): Promise<Answer> {
    const text = await readBody(req);
    const input = parse(text);
    if (operation === 'DeleteTable') {
      const answer = await this.call(text, req.headers);
      this.keySchemas.delete(String(input?.TableName));
      return answer;
    }
    if (!operation.startsWith('Transact'))
      return this.locks.hold(await this.locksOf(operation, input), () => this.single(operation, input, text, req.headers));
    if (!input) return json(400, { __type: 'com.amazon.coral.service#SerializationException' });
    if (operation === 'TransactWriteItems') return this.transactWrite(input);
    if (operation === 'TransactGetItems') return this.transactGet(input);
    return json(400, { __type: 'com.amazon.coral.service#UnknownOperationException' });
  }

  /**
   * A single-item or batch request, its locks held. dynalite ignores ReturnValuesOnConditionCheckFailure, so the item
   * is read (under the same lock) and added to the ConditionalCheckFailedException, as DynamoDB does.
   */
  private async single(operation: string, input: Request | undefined, text: string, headers: IncomingHttpHeaders): Promise<Answer> {
    const answer = await this.call(text, headers);
    if (!input || input.ReturnValuesOnConditionCheckFailure !== 'ALL_OLD' || !conditionFailed(answer)) return answer;
    const key = await this.keyOf(input, operation === 'PutItem' ? 'Item' : 'Key');
    const old = key instanceof Answer ? key : await this.read(String(input.TableName), key);
    return old instanceof Answer || !old.Item ? answer : json(400, { ...(JSON.parse(answer.body) as Request), Item: old.Item });
  }

  private async transactWrite(input: Request): Promise<Answer> {
    const list = checkList(input.TransactItems);
    if (typeof list === 'string') return validation(list);
    const writes: Write[] = [];
    for (const entry of list) {
      const kinds = WRITE_KINDS.filter((kind) => isObject(entry?.[kind]));
      if (kinds.length !== 1) return validation('TransactItems can only contain one of Check, Put, Update or Delete');
      const kind = kinds[0]!;
      const { ReturnValuesOnConditionCheckFailure: returnValues, ...request } = entry[kind]!;
      if (kind === 'ConditionCheck' && typeof request.ConditionExpression !== 'string') {
        return validation('Value null at conditionCheck.conditionExpression failed to satisfy constraint: Member must not be null');
      }
      const key = await this.keyOf(request, kind === 'Put' ? 'Item' : 'Key');
      if (key instanceof Answer) return key;
      const table = String(request.TableName);
      writes.push({ kind, request, table, key, lock: lockName(table, key), returnOld: returnValues === 'ALL_OLD' });
    }
    if (new Set(writes.map((write) => write.lock)).size !== writes.length)
      return validation('Transaction request cannot include multiple operations on one item');

    return this.locks.hold(
      writes.map((write) => write.lock),
      async () => {
        const reasons: Reason[] = [];
        const undo: Array<[operation: string, request: Request]> = [];
        let error: Answer | undefined;
        // Every item is tried, even after a failure, so that each failing condition is reported (as DynamoDB does).
        for (const write of writes) {
          const outcome = await this.apply(write);
          if (outcome instanceof Answer) {
            error = outcome;
            break;
          }
          reasons.push(outcome.reason);
          if (outcome.undo) undo.push(outcome.undo);
        }
        if (!error && reasons.every((reason) => reason.Code === 'None')) return json(200, {});
        for (const [operation, request] of undo.reverse()) {
          const undone = await this.send(operation, request);
          if (undone.status !== 200) throw new Error(`could not undo a cancelled transaction's ${operation}: ${undone.body}`);
        }
        return (
          error ??
          json(400, {
            __type: 'com.amazonaws.dynamodb.v20120810#TransactionCanceledException',
            // `Message`, as DynamoDB and DynamoDB Local send it (the SDK takes `message` or `Message` for error.message).
            Message: `Transaction cancelled, please refer cancellation reasons for specific reasons [${reasons.map((r) => r.Code).join(', ')}]`,
            CancellationReasons: reasons,
          })
        );
      },
    );
  }

  /** One write of a transaction whose locks are held: applied (with a way to undo it), or why it was not. */
  private async apply(write: Write): Promise<Answer | { reason: Reason; undo?: [string, Request] }> {
    const { table, key } = write;
    const failed = async (): Promise<{ reason: Reason } | Answer> => {
      const old = write.returnOld ? await this.read(table, key) : {};
      if (old instanceof Answer) return old;
      return { reason: { Code: 'ConditionalCheckFailed', Message: 'The conditional request failed', ...(old.Item && { Item: old.Item }) } };
    };
    if (write.kind === 'ConditionCheck') {
      // The condition is checked by a write that changes nothing: the item put back as it is, or a delete of no item.
      const old = await this.read(table, key);
      if (old instanceof Answer) return old;
      const { Key: _, ...check } = write.request;
      const answer = old.Item
        ? await this.send('PutItem', { ...check, Item: old.Item })
        : await this.send('DeleteItem', { ...check, Key: key });
      if (answer.status === 200) return { reason: { Code: 'None' } };
      return conditionFailed(answer) ? failed() : answer;
    }
    const answer = await this.send(`${write.kind}Item`, { ...write.request, ReturnValues: 'ALL_OLD' });
    if (answer.status !== 200) return conditionFailed(answer) ? failed() : answer;
    const old = (JSON.parse(answer.body) as { Attributes?: Item }).Attributes;
    return {
      reason: { Code: 'None' },
      undo: old ? ['PutItem', { TableName: table, Item: old }] : ['DeleteItem', { TableName: table, Key: key }],
    };
  }

  private async transactGet(input: Request): Promise<Answer> {
    const list = checkList(input.TransactItems);
    if (typeof list === 'string') return validation(list);
    const gets = list.map((entry) => entry?.Get);
    if (!gets.every(isObject)) return validation('TransactItems can only contain Get');
    const locks: string[] = [];
    for (const get of gets) {
      const key = await this.keyOf(get, 'Key');
      if (key instanceof Answer) return key;
      locks.push(lockName(String(get.TableName), key));
    }
    if (new Set(locks).size !== locks.length) return validation('Transaction request cannot include multiple operations on one item');
    return this.locks.hold(locks, async () => {
      const Responses: Array<{ Item?: Item }> = [];
      for (const get of gets) {
        const answer = await this.send('GetItem', { ...get, ConsistentRead: true });
        if (answer.status !== 200) return answer;
        const { Item } = JSON.parse(answer.body) as { Item?: Item };
        Responses.push(Item ? { Item } : {});
      }
      return json(200, { Responses });
    });
  }

  /** The current item (a consistent read; no Item when there is none), or dynalite's error answer. */
  private async read(table: string, key: Item): Promise<{ Item?: Item } | Answer> {
    const answer = await this.send('GetItem', { TableName: table, Key: key, ConsistentRead: true });
    return answer.status === 200 ? (JSON.parse(answer.body) as { Item?: Item }) : answer;
  }

  /** The lock names a single-item or batch request needs; none when it is malformed (dynalite will say why). */
  private async locksOf(operation: string, input: Request | undefined): Promise<string[]> {
    if (!input) return [];
    const named = async (request: Request, field: 'Key' | 'Item') => {
      const key = await this.keyOf(request, field);
      return key instanceof Answer ? [] : [lockName(String(request.TableName), key)];
    };
    if (operation === 'PutItem') return named(input, 'Item');
    if (operation !== 'BatchGetItem' && operation !== 'BatchWriteItem') return named(input, 'Key');
    const names: string[] = [];
    for (const [TableName, spec] of Object.entries(isObject(input.RequestItems) ? input.RequestItems : {})) {
      if (operation === 'BatchGetItem') {
        for (const Key of asArray((spec as Request)?.Keys)) names.push(...(await named({ TableName, Key }, 'Key')));
        continue;
      }
      for (const write of asArray(spec)) {
        if (isObject(write?.PutRequest)) names.push(...(await named({ TableName, ...write.PutRequest }, 'Item')));
        if (isObject(write?.DeleteRequest)) names.push(...(await named({ TableName, ...write.DeleteRequest }, 'Key')));
      }
    }
    return names;
  }

  /** The key attributes of a request's Key, or of its Item (picked by the table's key schema). */
  private async keyOf(request: Request, field: 'Key' | 'Item'): Promise<Item | Answer> {
    const value = request[field];
    if (typeof request.TableName !== 'string' || !isObject(value)) return validation(`TableName and ${field} are required`);
    if (field === 'Key') return value as Item;
    const names = await this.keySchema(request.TableName);
    if (names instanceof Answer) return names;
    return Object.fromEntries(names.filter((name) => name in value).map((name) => [name, value[name] as AttributeValue]));
  }

  private keySchema(table: string): Promise<string[] | Answer> {
    let schema = this.keySchemas.get(table);
    if (!schema) {
      schema = this.send('DescribeTable', { TableName: table }).then((answer) => {
        if (answer.status !== 200) {
          this.keySchemas.delete(table); // not cached: the table may be created next
          return answer;
        }
        const { Table } = JSON.parse(answer.body) as { Table: { KeySchema: Array<{ AttributeName: string }> } };
        return Table.KeySchema.map((key) => key.AttributeName);
      });
      this.keySchemas.set(table, schema);
    }
    return schema;
  }

  /** A request of the shim's own, to dynalite directly: it takes no lock (the transaction holds them). */
  private send(operation: string, request: Request): Promise<Answer> {
    return this.call(JSON.stringify(request), {
      'content-type': 'application/x-amz-json-1.0',
      'x-amz-target': `${TARGET}${operation}`,
      'x-amz-date': '20200101T000000Z',
      authorization: 'AWS4-HMAC-SHA256 Credential=local/20200101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0',
    });
  }

  /** dynalite's listener on an in-memory request and response: its answer, without any socket. */
  private call(body: string, headers: IncomingHttpHeaders): Promise<Answer> {
    return new Promise((resolve) => {
      const req = Object.assign(Readable.from([Buffer.from(body)]), { method: 'POST', url: '/', headers });
      const captured: Record<string, string | number> = {};
      const res = {
        statusCode: 200,
        setHeader: (name: string, value: string | number) => void (captured[name] = value),
        end: (data?: string) => resolve(new Answer(res.statusCode, data ?? '', captured)),
      };
      this.dynalite(req as unknown as IncomingMessage, res as unknown as ServerResponse);
    });
  }
}

/**
 * Named locks, each a FIFO queue. `hold` takes its names in sorted order, so two holders never wait for each other in a
 * cycle. Each lock is held until the work's answer is ready (the answer itself is sent after).
 */
class KeyLocks {
  private readonly tails = new Map<string, Promise<void>>();

  async hold<T>(names: string[], work: () => Promise<T>): Promise<T> {
    const releases: Array<() => void> = [];
    try {
      for (const name of [...new Set(names)].sort()) releases.push(await this.acquire(name));
      return await work();
    } finally {
      releases.forEach((release) => release());
    }
  }

  private async acquire(name: string): Promise<() => void> {
    const previous = this.tails.get(name) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    const tail = previous.then(() => mine);
    this.tails.set(name, tail);
    await previous;
    return () => {
      release();
      if (this.tails.get(name) === tail) this.tails.delete(name);
    };
  }
}

/**
 * The lock of one item. Numbers are compared as doubles, so `1` and `1.0` share a lock (a lossy match can only make
 * two items share a lock, never split one item's).
 */
function lockName(table: string, key: Item): string {
  const attributes = Object.keys(key).sort();
  return JSON.stringify([table, ...attributes.map((name) => [name, 'N' in (key[name] ?? {}) ? { N: Number(key[name]!.N) } : key[name]])]);
}

function checkList(value: unknown): Array<Record<string, Request>> | string {
  if (!Array.isArray(value) || value.length === 0) {
    return "1 validation error detected: Value '[]' at 'transactItems' failed to satisfy constraint: Member must have length greater than or equal to 1";
  }
  if (value.length > MAX_ITEMS) {
    return `1 validation error detected: Value at 'transactItems' failed to satisfy constraint: Member must have length less than or equal to ${MAX_ITEMS}`;
  }
  return value as Array<Record<string, Request>>;
}

function conditionFailed(answer: Answer): boolean {
  return answer.status === 400 && answer.body.includes('#ConditionalCheckFailedException"');
}

function validation(message: string): Answer {
  return json(400, { __type: 'com.amazon.coral.validate#ValidationException', message });
}

function json(status: number, data: unknown): Answer {
  return new Answer(status, JSON.stringify(data));
}

function reply(res: ServerResponse, answer: Answer): void {
  const headers = answer.headers ?? {
    'x-amzn-RequestId': randomBytes(39).toString('base64').toUpperCase().replace(/\+|\//g, '0'),
    'x-amz-crc32': crc32(answer.body),
    'Content-Type': 'application/x-amz-json-1.0',
    'Content-Length': Buffer.byteLength(answer.body),
  };
  res.writeHead(answer.status, headers).end(answer.body);
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString();
}

function parse(text: string): Request | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return isObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

function isObject(value: unknown): value is Request {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function asArray(value: unknown): Request[] {
  return Array.isArray(value) ? (value as Request[]) : [];
}
