import { DeleteCommand, GetCommand, paginateQuery, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { type Waiter, waiterDemand, waiterGate } from '../../../domain/waiting';
import type { JobKind } from '../../../kinds/registry';
import type { JobRecord } from '../../../ports/jobLedger';
import type { WaitingListRead } from '../../../ports/leaseStore';
import { GATE_EXISTS } from '../conditions';
import { expiresAfter, SECONDS_PER_DAY } from '../jobItem';
import { poolKey, RACE_MARK_SK, raceMarkKey, WAIT_PREFIX, waiterKey, WAITING_LIST_END } from '../keys';
import type { LeaseTable } from './leaseTable';

/**
 * Waiting lists: a waiter item (pk POOL#<gate>, sk WAIT#<wait key>) for each job parked on the list of the gate that
 * had no room for it, in wait order. It carries the job's body and demand. A gate's hand-off tickets: one counter item
 * (pk HANDOFF#<gate>, sk TICKET, attribute `ticket`), in a partition of its own: the pool's partition already takes
 * every hand-off's counter check and waiter delete.
 */

/**
 * A race mark matters for a minute (SPREAD_MEMORY_MS): its age is read from `at`. It expires a day later, and DynamoDB's
 * TTL deletes it some time after that (up to a few days; until then it is read, and ignored, as an old mark).
 */
const RACE_MARK_TTL_S = SECONDS_PER_DAY;

const ticketKey = (gate: string) => ({ pk: `HANDOFF#${gate}`, sk: 'TICKET' });

interface WaiterItem {
  sk: string;
  jobId: string;
  kind: JobKind;
  body: string;
  since: number;
  /** the job's pool and demand (absent on items written before keyed limits: one unit of the gate) */
  pool?: string;
  keys?: string[];
  units?: number;
}

export class Waiters {
  constructor(private readonly table: LeaseTable) {}

  async addWaiter(waiter: Waiter, create?: JobRecord): Promise<boolean> {
    const put = { TableName: this.table.tableName, Item: waiterItem(waiter, waiterGate(waiter)) };
    if (!create) {
      await this.table.send(new PutCommand(put));
      return true;
    }
    return (await this.table.transact([{ Put: put }, this.table.newJob(create)])) === undefined;
  }

  async moveWaiter(waiter: Waiter, toGate: string): Promise<boolean> {
    const fromGate = waiterGate(waiter);
    if (fromGate === toGate) return true;
    const reasons = await this.table.transact([
      { Delete: { TableName: this.table.tableName, Key: waiterKey(fromGate, waiter.waitKey), ConditionExpression: GATE_EXISTS } },
      { Put: { TableName: this.table.tableName, Item: waiterItem(waiter, toGate) } },
    ]);
    return reasons === undefined;
  }

  async oldestWaiters(pool: string, count: number): Promise<Waiter[]> {
    if (count <= 0) return [];
    const { Items } = await this.table.send(
      new QueryCommand({
        TableName: this.table.tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :wait)',
        ExpressionAttributeValues: { ':pk': poolKey(pool).pk, ':wait': WAIT_PREFIX },
        ConsistentRead: true,
        Limit: count,
      }),
    );
    return (Items ?? []).map((item) => toWaiter(pool, item as WaiterItem));
  }

  /**
   * One strongly consistent Query from the race mark's key to the end of the list: the mark, if any, comes first, then
   * the waiters (one more item asked for, the mark's place).
   */
  async readWaitingList(gate: string, count: number): Promise<WaitingListRead> {
    const { Items } = await this.table.send(
      new QueryCommand({
        TableName: this.table.tableName,
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :mark AND :end',
        ExpressionAttributeValues: { ':pk': poolKey(gate).pk, ':mark': RACE_MARK_SK, ':end': WAITING_LIST_END },
        ConsistentRead: true,
        Limit: Math.max(0, count) + 1,
      }),
    );
    const items = Items ?? [];
    const mark = items[0]?.sk === RACE_MARK_SK ? (items.shift() as { at?: number }) : undefined;
    const waiters = items.slice(0, Math.max(0, count)).map((item) => toWaiter(gate, item as WaiterItem));
    return { waiters, ...(typeof mark?.at === 'number' && { racedAt: mark.at }) };
  }

  /** A plain PutItem of the mark: it replaces the one before. */
  async markRace(gate: string, at: number): Promise<void> {
    await this.table.send(
      new PutCommand({
        TableName: this.table.tableName,
        Item: { ...raceMarkKey(gate), at, expiresAt: expiresAfter(at, RACE_MARK_TTL_S) },
      }),
    );
  }

  async getWaiter(pool: string, waitKey: string): Promise<Waiter | undefined> {
    const { Item } = await this.table.send(
      new GetCommand({ TableName: this.table.tableName, Key: waiterKey(pool, waitKey), ConsistentRead: true }),
    );
    return Item ? toWaiter(pool, Item as WaiterItem) : undefined;
  }

  async removeWaiter(pool: string, waitKey: string): Promise<void> {
    await this.table.send(new DeleteCommand({ TableName: this.table.tableName, Key: waiterKey(pool, waitKey) }));
  }

  async handOffTicket(gate: string): Promise<number> {
    const { Attributes } = await this.table.send(
      new UpdateCommand({
        TableName: this.table.tableName,
        Key: ticketKey(gate),
        UpdateExpression: 'ADD ticket :one',
        ExpressionAttributeValues: { ':one': 1 },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    return Number(Attributes?.ticket ?? 0);
  }

  async countWaiters(pool: string): Promise<number> {
    let total = 0;
    const pages = paginateQuery(
      { client: this.table.doc },
      {
        TableName: this.table.tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :wait)',
        ExpressionAttributeValues: { ':pk': poolKey(pool).pk, ':wait': WAIT_PREFIX },
        Select: 'COUNT',
      },
    );
    for await (const page of pages) total += page.Count ?? 0;
    return total;
  }
}

function toWaiter(gate: string, item: WaiterItem): Waiter {
  const pool = item.pool ?? gate;
  return {
    pool,
    gate,
    demand: { pool, keys: item.keys ?? [], units: item.units ?? 1 },
    jobId: item.jobId,
    kind: item.kind,
    waitKey: item.sk.slice(WAIT_PREFIX.length),
    body: item.body,
    since: item.since,
  };
}

function waiterItem(waiter: Waiter, gate: string): Record<string, unknown> {
  const demand = waiterDemand(waiter);
  return {
    ...waiterKey(gate, waiter.waitKey),
    jobId: waiter.jobId,
    kind: waiter.kind,
    body: waiter.body,
    since: waiter.since,
    pool: waiter.pool,
    keys: [...demand.keys],
    units: demand.units,
  };
}
