import { Readable } from 'node:stream';
import { seededRandom } from '../random';
import { CANCELLATION_REASON_CODES, DYNAMODB_ERRORS, type DynamoErrorName } from './dynamoErrors';

/**
 * A DynamoDB that fights back: SDK middleware on a DynamoDB client (so every adapter and engine behind it gets it) that
 * answers requests the way the DynamoDB API reference says DynamoDB may (dynamoErrors.ts lists every error and why):
 *
 * - contention on hot items, as DynamoDB has it and neither local engine does: a PutItem, UpdateItem or DeleteItem of
 *   an item that a TransactWriteItems sent through this client holds (sent, not answered yet) is rejected with
 *   TransactionConflictException, and a transaction meeting another one on an item is cancelled with a
 *   TransactionConflict reason for that item (`naturalConflicts`, on by default)
 *   (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html#transaction-conflict-handling);
 * - and whatever a policy picks for a request (DynamoFault): throttling, a server error before or after the write
 *   applied, an answer lost after it applied, a conflict, a transaction cancelled for capacity.
 *
 * Faults are answered as DynamoDB answers them: an HTTP response with the error's status and JSON body, which the
 * SDK's own deserializer turns into its own exception class, and which its retry strategy retries or not as it would
 * on AWS (the middleware sits below the retry middleware: each attempt is judged on its own). A lost answer is a
 * connection reset after the request was applied, which the SDK retries too.
 */

export const DynamoFault = {
  /** ProvisionedThroughputExceededException, ThrottlingException or RequestLimitExceeded: nothing written; the SDK retries */
  Throttle: 'throttle',
  /** InternalServerError (500) before the write: nothing written; the SDK retries */
  ServerError: 'server-error',
  /** InternalServerError (500) after the write applied: the SDK's retry meets its own effect */
  ServerErrorApplied: 'server-error-applied',
  /** the write applied, its answer lost (connection reset): the SDK's retry meets its own effect */
  LostAnswer: 'lost-answer',
  /** a write meets an ongoing transaction: TransactionConflictException, or a transaction cancelled (TransactionConflict) */
  Conflict: 'conflict',
  /** a transaction cancelled for capacity (ThrottlingError): nothing written, not retried by the SDK */
  TransactionThrottled: 'transaction-throttled',
} as const;
export type DynamoFault = (typeof DynamoFault)[keyof typeof DynamoFault];

/** Faults after which nothing was written and the caller (or the SDK) sees a refusal: outcomes are unchanged by them. */
export const NOTHING_WRITTEN_FAULTS: readonly DynamoFault[] = [
  DynamoFault.Throttle,
  DynamoFault.ServerError,
  DynamoFault.Conflict,
  DynamoFault.TransactionThrottled,
];
export const ALL_DYNAMO_FAULTS: readonly DynamoFault[] = Object.values(DynamoFault);

/** One attempt of one request, as the policy sees it. */
export interface DynamoRequest {
  /** DynamoDB's operation name (UpdateItem, TransactWriteItems, ...) */
  operation: string;
  /** the request as the client got it (marshalled attribute values) */
  input: Record<string, unknown>;
  /** 1 for the first attempt; the SDK's retries count up */
  attempt: number;
  /** the items it touches (`table|pk|sk`), for writes; empty for reads */
  items: string[];
  /** it writes (PutItem, UpdateItem, DeleteItem, TransactWriteItems, BatchWriteItem) */
  writes: boolean;
}

/** Picks a fault for an attempt, or none. */
export type DynamoFaultPolicy = (request: DynamoRequest) => DynamoFault | undefined;

export interface DynamoFaultOptions {
  policy?: DynamoFaultPolicy;
  /** reject writes that meet a transaction in flight through this client (default true) */
  naturalConflicts?: boolean;
  /** told of every fault answered (for a test's counts or a log) */
  onFault?: (fault: DynamoFault | 'natural-conflict' | 'stale-index-read', request: DynamoRequest) => void;
  /**
   * Reads of a global secondary index that lag: a Query with an IndexName is answered, at `rate` (seeded), with the
   * answer the same query got up to `maxAgeMs` ago (default STALE_INDEX_MAX_AGE_MS) instead of a fresh one, when there was one. An
   * index is updated asynchronously and read eventually consistent only: "changes to the table data are propagated to
   * the global secondary indexes within a fraction of a second, under normal conditions", with no bound given otherwise
   * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html#GSI.Reads).
   */
  staleIndexReads?: { rate: number; seed: number; maxAgeMs?: number };
}

/** How old an index answer staleIndexReads may give again, unless told. */
export const STALE_INDEX_MAX_AGE_MS = 2_000;

/** How far the index reads of a client with these options may lag (0: read as written). */
export function indexLagOf(options: DynamoFaultOptions | undefined): number {
  return options?.staleIndexReads ? (options.staleIndexReads.maxAgeMs ?? STALE_INDEX_MAX_AGE_MS) : 0;
}

export interface DynamoFaultLayer {
  /** faults answered so far, by kind (natural conflicts as 'natural-conflict') */
  counts(): Record<string, number>;
  setPolicy(policy: DynamoFaultPolicy | undefined): void;
  /** removes the middleware */
  stop(): void;
}

/** Any AWS SDK v3 client (its overloaded `add` is typed per step). */
interface MiddlewareClient {
  middlewareStack: { add(middleware: never, options: never): void; remove(name: string): boolean };
}

export type Args = { input: Record<string, unknown>; request?: { headers?: Record<string, string> } };
type Next = (args: Args) => Promise<{ response?: { body?: unknown } }>;

let installed = 0;

export function installDynamoFaults(client: MiddlewareClient, options: DynamoFaultOptions = {}): DynamoFaultLayer {
  const name = `sluiceDynamoFaults${++installed}`;
  let policy = options.policy;
  const counts: Record<string, number> = {};
  /** items held by transactions in flight: item -> how many */
  const held = new Map<string, number>();
  const stale = options.staleIndexReads && staleIndexAnswers(options.staleIndexReads);
  const note = (fault: DynamoFault | 'natural-conflict' | 'stale-index-read', request: DynamoRequest) => {
    counts[fault] = (counts[fault] ?? 0) + 1;
    options.onFault?.(fault, request);
  };

  const middleware = (next: Next, context: { commandName?: string }) => async (args: Args) => {
    const request = describeRequest((context.commandName ?? '').replace(/Command$/, ''), args);
    if (options.naturalConflicts !== false && request.writes && request.operation !== 'BatchWriteItem') {
      const busy = request.items.filter((item) => (held.get(item) ?? 0) > 0);
      if (busy.length > 0) {
        note('natural-conflict', request);
        return conflictAnswer(request, new Set(busy));
      }
    }
    if (stale && request.operation === 'Query' && typeof request.input.IndexName === 'string') {
      const earlier = stale.earlier(request);
      if (earlier) {
        note('stale-index-read', request);
        return earlier;
      }
    }
    const fault = policy?.(request);
    if (fault) note(fault, request);
    const transaction = request.operation === 'TransactWriteItems';
    if (transaction) for (const item of request.items) held.set(item, (held.get(item) ?? 0) + 1);
    try {
      const result = await answerWith(fault, request, () => next(args));
      return stale && request.operation === 'Query' ? await stale.remember(request, result) : result;
    } finally {
      if (transaction) for (const item of request.items) held.set(item, (held.get(item) ?? 1) - 1);
    }
  };
  // Below the retry middleware and the deserializer: each attempt is faulted on its own, and a synthetic answer is
  // parsed by the SDK exactly as DynamoDB's would be.
  client.middlewareStack.add(middleware as never, { step: 'deserialize', name, priority: 'low' } as never);
  return {
    counts: () => ({ ...counts }),
    setPolicy: (next) => void (policy = next),
    stop: () => void client.middlewareStack.remove(name),
  };
}

/** Index queries' answers kept for a while, to answer the same query again with one of them (staleIndexReads). */
function staleIndexAnswers(options: { rate: number; seed: number; maxAgeMs?: number }) {
  const random = seededRandom(options.seed);
  const maxAgeMs = options.maxAgeMs ?? STALE_INDEX_MAX_AGE_MS;
  const answersOf = new Map<string, { at: number; body: Buffer }>();
  const keyOf = (request: DynamoRequest) => JSON.stringify(request.input);
  return {
    /** An earlier answer to this query (a copy), if the draw says so and one is young enough. */
    earlier(request: DynamoRequest) {
      const kept = answersOf.get(keyOf(request));
      if (!kept || Date.now() - kept.at > maxAgeMs || random() >= options.rate) return undefined;
      return answer(200, JSON.parse(kept.body.toString('utf8')) as Record<string, unknown>);
    },
    /** Keeps a successful answer's body, and hands the SDK an identical one to read. */
    async remember<R extends { response?: { body?: unknown; statusCode?: number } }>(request: DynamoRequest, result: R): Promise<R> {
      const response = result.response;
      if (!response || response.statusCode !== 200 || !(response.body instanceof Readable)) return result;
      const chunks: Buffer[] = [];
      for await (const chunk of response.body) chunks.push(Buffer.from(chunk as Uint8Array));
      const body = Buffer.concat(chunks);
      answersOf.set(keyOf(request), { at: Date.now(), body });
      response.body = Readable.from([body]);
      return result;
    },
  };
}

/**
 * A seeded policy for suites that must see the same outcomes as without faults: only faults after which nothing was
 * written (by default), at `rate`, and never more than `maxInARow` times in a row on one item (so the SDK's and the
 * adapters' retries always get through: a test's answer never depends on luck).
 */
export function randomFaults(options: {
  seed: number;
  rate: number;
  faults?: readonly DynamoFault[];
  maxInARow?: number;
}): DynamoFaultPolicy {
  const random = seededRandom(options.seed);
  const faults = options.faults ?? NOTHING_WRITTEN_FAULTS;
  const maxInARow = options.maxInARow ?? 2;
  const streak = new Map<string, number>();
  return (request) => {
    const keys = request.items.length > 0 ? request.items : [`read|${request.operation}|${JSON.stringify(request.input).slice(0, 200)}`];
    const allowed = keys.every((key) => (streak.get(key) ?? 0) < maxInARow);
    const fault = allowed && random() < options.rate ? faults[Math.floor(random() * faults.length)] : undefined;
    for (const key of keys) {
      if (fault) streak.set(key, (streak.get(key) ?? 0) + 1);
      else streak.delete(key);
    }
    return fault;
  };
}

/**
 * Answers one attempt as `fault` says, `send` making the real request when the fault lets it through (or applies it
 * first): what the layer's middleware does, for callers that schedule requests themselves (the explorer).
 */
export async function answerWith<R extends { response?: { body?: unknown } }>(
  fault: DynamoFault | undefined,
  request: DynamoRequest,
  send: () => Promise<R>,
): Promise<R | ReturnType<typeof errorAnswer>> {
  switch (fault) {
    case DynamoFault.Throttle:
      return errorAnswer(pick(['ProvisionedThroughputExceededException', 'ThrottlingException', 'RequestLimitExceeded'], request));
    case DynamoFault.ServerError:
      return errorAnswer('InternalServerError');
    case DynamoFault.Conflict:
      if (request.writes) return conflictAnswer(request, new Set(request.items.slice(0, 1)));
      return errorAnswer('ProvisionedThroughputExceededException'); // reads meet no transaction: throttled instead
    case DynamoFault.TransactionThrottled:
      if (request.operation === 'TransactWriteItems') return cancelled(request, new Set(request.items.slice(0, 1)), 'ThrottlingError');
      return errorAnswer('ThrottlingException');
    default:
  }
  const result = await send();
  if (fault === DynamoFault.ServerErrorApplied) {
    drain(result.response?.body);
    return errorAnswer('InternalServerError');
  }
  if (fault === DynamoFault.LostAnswer) {
    drain(result.response?.body);
    throw lostAnswerError();
  }
  return result;
}

/** What the SDK sees when the connection drops before the response: a transient network error, which it retries. */
export function lostAnswerError(): Error {
  return Object.assign(new Error('socket hang up (fault injection: the answer was lost after the request was applied)'), {
    code: 'ECONNRESET',
    $metadata: {},
  });
}

// ---- requests ---------------------------------------------------------------------------------------------------------

const WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'TransactWriteItems', 'BatchWriteItem']);

/** An attempt as the middleware sees it (its command's input and its request's retry header). */
export function describeRequest(operation: string, args: Args): DynamoRequest {
  const input = args.input ?? {};
  const attempt = Number(/attempt=(\d+)/.exec(args.request?.headers?.['amz-sdk-request'] ?? '')?.[1] ?? 1);
  return { operation, input, attempt, items: itemsOf(operation, input), writes: WRITES.has(operation) };
}

type Marshalled = Record<string, { S?: string; N?: string; B?: unknown }>;

function itemKey(table: unknown, key: Marshalled | undefined): string {
  const pk = key?.pk?.S ?? key?.pk?.N ?? '';
  const sk = key?.sk?.S ?? key?.sk?.N ?? '';
  return `${String(table)}|${pk}|${sk}`;
}

/** The items a write touches, in the order of its actions (a transaction's reasons come in that order). */
function itemsOf(operation: string, input: Record<string, unknown>): string[] {
  if (operation === 'TransactWriteItems') {
    const actions = (input.TransactItems ?? []) as Array<Record<string, { TableName?: string; Key?: Marshalled; Item?: Marshalled }>>;
    return actions.map((action) => {
      const body = action.Put ?? action.Update ?? action.Delete ?? action.ConditionCheck ?? {};
      return itemKey(body.TableName, body.Key ?? body.Item);
    });
  }
  if (operation === 'PutItem') return [itemKey(input.TableName, input.Item as Marshalled)];
  if (operation === 'UpdateItem' || operation === 'DeleteItem') return [itemKey(input.TableName, input.Key as Marshalled)];
  if (operation === 'BatchWriteItem') {
    const byTable = (input.RequestItems ?? {}) as Record<
      string,
      Array<{ PutRequest?: { Item: Marshalled }; DeleteRequest?: { Key: Marshalled } }>
    >;
    return Object.entries(byTable).flatMap(([table, requests]) =>
      requests.map((r) => itemKey(table, r.PutRequest?.Item ?? r.DeleteRequest?.Key)),
    );
  }
  return [];
}

// ---- answers ----------------------------------------------------------------------------------------------------------

const CONTENT_TYPE = 'application/x-amz-json-1.0';

function answer(status: number, body: Record<string, unknown>) {
  return {
    response: {
      statusCode: status,
      headers: { 'content-type': CONTENT_TYPE, 'x-amzn-requestid': `sluice-fault-${++answers}` },
      body: Readable.from([Buffer.from(JSON.stringify(body))]),
    },
  };
}
let answers = 0;

function errorAnswer(name: DynamoErrorName, request?: string) {
  const fact = DYNAMODB_ERRORS[name];
  const message = `${fact.why} (fault injection${request ? `: ${request}` : ''})`;
  return answer(fact.status, { __type: `com.amazonaws.dynamodb.v20120810#${name}`, message });
}

/** A write meeting a transaction on `busy`: a single-item write is rejected, a transaction cancelled. */
function conflictAnswer(request: DynamoRequest, busy: ReadonlySet<string>) {
  if (request.operation === 'TransactWriteItems') return cancelled(request, busy, 'TransactionConflict');
  return errorAnswer('TransactionConflictException', `${request.operation} ${request.items.join(', ')}`);
}

function cancelled(request: DynamoRequest, at: ReadonlySet<string>, code: keyof typeof CANCELLATION_REASON_CODES) {
  const reasons = request.items.map((item) => (at.has(item) ? { Code: code, Message: CANCELLATION_REASON_CODES[code] } : { Code: 'None' }));
  return answer(400, {
    __type: 'com.amazonaws.dynamodb.v20120810#TransactionCanceledException',
    Message: `Transaction cancelled, please refer cancellation reasons for specific reasons [${reasons.map((r) => r.Code).join(', ')}]`,
    CancellationReasons: reasons,
  });
}

function pick<T>(options: readonly T[], request: DynamoRequest): T {
  return options[(request.attempt + request.items.length + request.operation.length) % options.length]!;
}

/** The real answer of a request whose answer the fault replaces: read and dropped, so its connection is reused. */
function drain(body: unknown): void {
  (body as { resume?: () => void } | undefined)?.resume?.();
}
