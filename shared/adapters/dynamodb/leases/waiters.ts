import { DeleteCommand, GetCommand, paginateQuery, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { type Waiter, waiterDemand, waiterGate } from '../../../domain/waiting';
import type { JobKind } from '../../../kinds/registry';
import type { JobRecord } from '../../../ports/jobLedger';
import { GATE_EXISTS } from '../conditions';
import { poolKey, WAIT_PREFIX, waiterKey } from '../keys';
import type { LeaseTable } from './leaseTable';

/**
 * Waiting lists: a waiter item (pk POOL#<gate>, sk WAIT#<wait key>) for each job parked on the list of the gate that
 * had no room for it, in wait order. It carries the job's body and demand. A gate's hand-off tickets: one counter item
 * (pk HANDOFF#<gate>, sk TICKET, attribute `ticket`), in a partition of its own: the pool's partition already takes
 * every hand-off's counter check and waiter delete.
 */

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
