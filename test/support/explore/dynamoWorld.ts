import { AsyncLocalStorage } from 'node:async_hooks';
import type { AddressInfo } from 'node:net';
import { DeleteTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, paginateScan, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import dynalite from 'dynalite';
import { type Backoff } from '../../../shared/adapters/dynamodb/contention';
import { fromJobItem } from '../../../shared/adapters/dynamodb/jobItem';
import { DynamoJobLedger } from '../../../shared/adapters/dynamodb/jobLedger';
import { POOL_SK, WAIT_PREFIX } from '../../../shared/adapters/dynamodb/keys';
import { DynamoLeaseStore } from '../../../shared/adapters/dynamodb/leaseStore';
import { DynamoScheduleStore } from '../../../shared/adapters/dynamodb/scheduleStore';
import { sluiceServices } from '../../../shared/app/services';
import { noMetrics, silentLog, type SluiceDeps, type SluiceSettings } from '../../../shared/app/deps';
import { demandOf } from '../../../shared/domain/job';
import { defaultKeyLimit, gatesOf, isKeyGate, keyOf } from '../../../shared/domain/limits';
import type { JobRecord } from '../../../shared/ports/jobLedger';
import type { JobQueue } from '../../../shared/ports/jobQueue';
import type { JobStarter } from '../../../shared/ports/jobStarter';
import { type Args, describeRequest, type DynamoRequest } from '../../../local/faults/dynamoFaults';
import { withTransactions } from '../../../local/dynaliteTransactions';
import { LOCAL_CREDENTIALS, RETRY_AT_ONCE } from '../dynamodbLocal';
import { everyKind, mapKinds } from '../fakes/everyKind';
import { FakeStarter } from '../fakes/fakeStarter';
import { ManualClock, seededRandom, T0 } from '../fakes/manualClock';
import { RecordingJobQueue } from '../fakes/recordingJobQueue';
import { createSluiceTable } from '../table';
import {
  EXPLORE_SETTINGS,
  fakeObservations,
  type ExploreServices,
  type ExploreWorld,
  type ExploreWorldOptions,
  type Observer,
  type PortWrapper,
} from './world';

/**
 * The explored world on the real DynamoDB adapters (shared/adapters/dynamodb) against dynalite with its transaction
 * shim, in this process: every DynamoDB request an invocation sends (every attempt, the SDK's retries included) is a
 * scheduled step of its own, made, applied and answered only when the scheduler releases it, with the run's faults
 * applied to it. So the adapters' own loops (rate bookings and their fences, contention retries, reads of ALL_OLD)
 * interleave with each other and with the other invocations' requests, as on AWS. The job APIs and the queue are the
 * same fakes as in the in-memory world, scheduled as ports.
 *
 * Lambda runs each environment's invocations one at a time and keeps its module state (a lease store's beliefs about
 * rates) between them: the world has CONTAINERS environments, invocations taking them in turn.
 */

/** What the run does with one request of one invocation (schedule it, apply its faults). */
export interface RequestHooks<Inv> {
  request(inv: Inv, request: DynamoRequest, send: () => Promise<unknown>): Promise<unknown>;
}

export interface DynamoExploreWorld<Inv> extends ExploreWorld {
  /** runs an invocation's work so that its DynamoDB requests know whose they are */
  within<T>(inv: Inv, work: () => T): T;
  /** resolves once every request in flight is answered and blocked at a scheduled step, or done */
  settle(): Promise<void>;
  /** another writer books a start on a rated gate's counter (contention): true if the counter is rated */
  phantomBooking(item: string): Promise<boolean>;
  close(): Promise<void>;
}

const CONTAINERS = 2;

/** The explorer's contention retries wait no time: waiting is not what is explored, the order is. */
const NO_WAIT: Backoff = { sleep: () => Promise.resolve(), random: () => 0 };

let engine: Promise<string> | undefined;

/** One dynalite (with transactions) for the whole process, started on first use; each world gets a table of its own. */
function dynaliteEndpoint(): Promise<string> {
  engine ??= new Promise((resolve, reject) => {
    const server = withTransactions(dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 }));
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.unref();
      resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    });
  });
  return engine;
}

function client(endpoint: string): DynamoDBClient {
  return new DynamoDBClient({ endpoint, region: 'us-east-1', credentials: LOCAL_CREDENTIALS, retryStrategy: RETRY_AT_ONCE as never });
}

export async function makeDynamoWorld<Inv extends object>(
  options: ExploreWorldOptions,
  hooks: RequestHooks<Inv>,
): Promise<DynamoExploreWorld<Inv>> {
  const settings: SluiceSettings = {
    ...EXPLORE_SETTINGS,
    pools: options.pools,
    keyLimits: options.keyLimits ?? {},
    rates: options.rates ?? {},
    ...options.settings,
  };
  const endpoint = await dynaliteEndpoint();
  const clock = new ManualClock(T0);
  const plainClient = client(endpoint);
  const plain = DynamoDBDocumentClient.from(plainClient, { marshallOptions: { removeUndefinedValues: true } });
  const table = await createSluiceTable(plainClient, 'explore');

  // The invocations' client: each request scheduled through the hooks, counted while in flight.
  const current = new AsyncLocalStorage<Inv>();
  let inFlight = 0;
  let blocked = 0;
  let dirty = true;
  const scheduledClient = client(endpoint);
  const count = (next: (args: unknown) => Promise<unknown>) => async (args: unknown) => {
    if (!current.getStore()) return next(args);
    inFlight++;
    try {
      return await next(args);
    } finally {
      inFlight--;
    }
  };
  const schedule = (next: (args: Args) => Promise<unknown>, context: { commandName?: string }) => async (args: Args) => {
    const inv = current.getStore();
    const request = describeRequest((context.commandName ?? '').replace(/Command$/, ''), args);
    if (request.writes) dirty = true;
    if (!inv) return next(args);
    blocked++;
    let released = false;
    return hooks
      .request(inv, request, () => {
        released = true;
        blocked--;
        return next(args).finally(() => (dirty = true));
      })
      .finally(() => {
        if (!released) blocked--; // refused without being sent (a crash before it)
      });
  };
  scheduledClient.middlewareStack.add(count as never, { step: 'initialize', name: 'exploreInFlight', priority: 'high' } as never);
  scheduledClient.middlewareStack.add(schedule as never, { step: 'deserialize', name: 'exploreSchedule', priority: 'low' } as never);
  const doc = DynamoDBDocumentClient.from(scheduledClient, { marshallOptions: { removeUndefinedValues: true } });

  const containers = Array.from({ length: CONTAINERS }, () => ({
    leases: new DynamoLeaseStore(doc, table, { retentionDays: 30, backoff: NO_WAIT }),
    ledger: new DynamoJobLedger(doc, table, { retentionDays: 30, backoff: NO_WAIT }),
    schedule: new DynamoScheduleStore(doc, table, { retentionDays: 30, backoff: NO_WAIT }),
  }));
  let invocations = 0;
  const queue = new RecordingJobQueue();
  const starters = everyKind((kind) => new FakeStarter(kind, { idempotent: true, clock }), { glue: new FakeStarter('glue', { clock }) });
  const random = seededRandom(options.seed ?? 8);
  const log = options.log ?? silentLog;

  const services = (wrap: PortWrapper): ExploreServices => {
    const container = containers[invocations++ % CONTAINERS]!;
    const deps: SluiceDeps = {
      ...container,
      queue: wrap<JobQueue>(queue, 'queue'),
      starters: mapKinds(starters, (starter, kind) => wrap<JobStarter>(starter, kind)),
      clock,
      random,
      log,
      metrics: noMetrics,
      settings,
    };
    return sluiceServices(deps);
  };

  // ---- what the checks read: the table as it is (one scan after any write), the fakes ------------------------------
  let snapshot: Map<string, Record<string, unknown>> = new Map();
  const read = async (): Promise<Map<string, Record<string, unknown>>> => {
    if (!dirty) return snapshot;
    dirty = false;
    const items = new Map<string, Record<string, unknown>>();
    for await (const page of paginateScan({ client: plain }, { TableName: table, ConsistentRead: true })) {
      for (const item of page.Items ?? []) items.set(`${String(item.pk)}|${String(item.sk)}`, item);
    }
    snapshot = items;
    return items;
  };
  const counter = async (gate: string) => (await read()).get(`POOL#${gate}|${POOL_SK}`);
  const records = async (): Promise<JobRecord[]> =>
    [...(await read()).values()].filter((item) => String(item.pk).startsWith('JOB#')).map((item) => fromJobItem(item));

  const observe: Observer = {
    async limit(gate) {
      const configured = isKeyGate(gate) ? defaultKeyLimit(keyOf(gate), settings.keyLimits ?? {}) : settings.pools[gate];
      const item = await counter(gate);
      return item ? Number(item.limit) : (configured ?? 0);
    },
    async holders(gate) {
      return (await records())
        .filter((record) => record.lease && gatesOf(demandOf(record.spec)).includes(gate))
        .map((record) => record.jobId)
        .sort();
    },
    async inUse(gate) {
      return Number((await counter(gate))?.inUse ?? 0);
    },
    async exists(gate) {
      return (await counter(gate)) !== undefined;
    },
    async waiters() {
      return [...(await read()).values()]
        .filter((item) => String(item.pk).startsWith('POOL#') && String(item.sk).startsWith(WAIT_PREFIX))
        .map((item) => ({ pool: String(item.pool ?? String(item.pk).slice('POOL#'.length)), jobId: String(item.jobId) }));
    },
    async job(jobId) {
      const record = (await records()).find((r) => r.jobId === jobId);
      return record && { state: record.state, executionId: record.executionId, startRequested: record.startRequested };
    },
    ...fakeObservations(starters, queue),
  };

  return {
    clock,
    settings,
    services,
    observe,
    within: (inv, work) => current.run(inv, work),
    async settle() {
      // Every request sent by an invocation is either blocked at its scheduled step or answered and done with; the
      // continuations after an answer run up to their next port call or request (the fakes only use microtasks).
      for (let quiet = 0; quiet < 3;) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        quiet = inFlight === blocked ? quiet + 1 : 0;
      }
    },
    async phantomBooking(item) {
      const [, pk, sk] = item.split('|');
      if (!pk?.startsWith('POOL#') || sk !== POOL_SK) return false;
      const { Item } = await plain.send(new GetCommand({ TableName: table, Key: { pk, sk }, ConsistentRead: true }));
      if (Item?.intervalMs === undefined) return false;
      const tat = Number(Item.tat ?? 0);
      await plain
        .send(
          new UpdateCommand({
            TableName: table,
            Key: { pk, sk },
            UpdateExpression: 'SET tat = :next',
            ConditionExpression: 'tat = :tat',
            ExpressionAttributeValues: { ':tat': tat, ':next': Math.max(tat, clock.now()) + Number(Item.intervalMs) },
          }),
        )
        .catch(() => undefined);
      dirty = true;
      return true;
    },
    async close() {
      // An enabled AsyncLocalStorage stays on Node's list, and every promise made after visits every one on it: a
      // world per scenario would make each later one slower (a fifth of a long exploration's CPU).
      current.disable();
      await plain.send(new DeleteTableCommand({ TableName: table })).catch(() => undefined);
      plainClient.destroy();
      scheduledClient.destroy();
    },
  };
}
