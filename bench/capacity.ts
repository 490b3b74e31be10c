import { callerOf, endedEntriesOf, INDEX_WRITES, itemOf, type MiddlewareClient, slotChangeOf } from './tracer';

/**
 * Capacity units of Sluice's DynamoDB calls, as the engine reports them: middleware on Sluice's own client (the bench
 * adds it; product code never asks) sets `ReturnConsumedCapacity: 'INDEXES'` on every call and adds up the
 * `ConsumedCapacity` of each answer: the table's units and each index's. DynamoDB Local reports them (dynalite does
 * not): for a single-item call by DynamoDB's rules (a write 1 unit per KB of the larger of the item's old and new
 * images, a strongly consistent read 1 per 4 KB, an eventually consistent one half that, a query by the size it read),
 * and the index's own writes when a write changes what the index holds.
 *
 * Not for a transaction: DynamoDB bills every item of a TransactWriteItems 2 units per KB (a ConditionCheck billed as a
 * write), but DynamoDB Local reports a transaction of several small items as if it were one (2 units for 2, 3 or 4
 * items under 1 KB; checked against it with a probe). So a transaction is counted here by DynamoDB's rule: 2 units per
 * item (`wcu`; Sluice's items are under 1 KB: `largestPlainWriteUnits` checks it on the plain writes of the same
 * items), plus `unitsPerIndexWriteInTransaction` per index entry its slot change puts or deletes (take, reserve: one
 * put; free, revoke: one delete; pass: both; claim: none). What DynamoDB Local itself reported is kept too
 * (`wcuReported`, `gsiWcuReported`).
 *
 * A failed write (a condition that did not hold, a cancelled transaction) comes back as an error, with no
 * ConsumedCapacity: such calls are counted apart, with an estimate of their units (`failedWcuEstimate`: 1 per plain
 * write, 2 per item of a transaction, the items Sluice writes being under 1 KB). AWS bills a failed conditional write
 * as a write; the estimate counts a cancelled transaction as if it had been applied, an upper bound.
 */
export interface CapacityTotals {
  calls: number;
  /** Write units of applied writes, all tables and indexes, by DynamoDB's rules (see above: transactions per item). */
  wcu: number;
  /** Write units as DynamoDB Local reported them (transactions under-reported). */
  wcuReported: number;
  /** Read units reported. */
  rcu: number;
  /** Of `wcu`, the holders index's (writes of the table that changed a holder). */
  gsiWcu: number;
  /** Of `wcu`, the `ended` index's: an entry per job that ends, filed by the write that ends it (tracer.ts endedEntriesOf). */
  endedWcu: number;
  gsiWcuReported: number;
  /** Of `rcu`, the units reported for queries of the holders index. */
  gsiRcu: number;
  /**
   * Write units that landed on pool counter items (pk POOL#<pool>, sk POOL): the reported units of a plain write to a
   * counter, and for a transaction its counter item's share, `unitsPerCounterCheck` or `unitsPerCounterUpdate` (measured
   * on the engine: a transaction with the counter item alone, see calibrateCounter).
   */
  counterWcu: number;
  /** Read units of reads of a counter item (GetItem POOL). */
  counterRcu: number;
  /** Write units on waiter items (same partition key as the counter: PutItem / DeleteItem WAIT#...). */
  waiterWcu: number;
  /** Read units of queries of a pool's waiters (same partition key as the counter). */
  waiterRcu: number;
  /** Writes that failed (condition not met, transaction cancelled): no units reported. */
  failedWrites: number;
  failedWcuEstimate: number;
  /** Of those, the estimate for counter items (2 per counter item of a cancelled transaction, 1 per plain write). */
  failedCounterWcuEstimate: number;
  /** The most units one plain (non-transactional) write reported: 1 means every item written was under 1 KB. */
  largestPlainWriteUnits: number;
  /** Per call kind (`TransactWriteItems pass`, `UpdateItem JOB`, `GetItem RUN`, `Query WAIT`, ...); wcu by DynamoDB's rules. */
  byCall: Record<string, { calls: number; failed: number; wcu: number; rcu: number }>;
}

export const emptyTotals = (): CapacityTotals => ({
  calls: 0,
  wcu: 0,
  wcuReported: 0,
  rcu: 0,
  gsiWcu: 0,
  endedWcu: 0,
  gsiWcuReported: 0,
  gsiRcu: 0,
  counterWcu: 0,
  counterRcu: 0,
  waiterWcu: 0,
  waiterRcu: 0,
  failedWrites: 0,
  failedWcuEstimate: 0,
  failedCounterWcuEstimate: 0,
  largestPlainWriteUnits: 0,
  byCall: {},
});

const READ_OPS = new Set(['GetItem', 'Query', 'Scan', 'BatchGetItem', 'TransactGetItems']);
const WITH_CAPACITY = new Set([
  'GetItem',
  'PutItem',
  'UpdateItem',
  'DeleteItem',
  'Query',
  'Scan',
  'BatchGetItem',
  'BatchWriteItem',
  'TransactGetItems',
  'TransactWriteItems',
]);

interface Consumed {
  CapacityUnits?: number;
  ReadCapacityUnits?: number;
  WriteCapacityUnits?: number;
  GlobalSecondaryIndexes?: Record<string, { CapacityUnits?: number; ReadCapacityUnits?: number; WriteCapacityUnits?: number }>;
}

/** Units of one ConsumedCapacity entry: read and write (AWS splits them; DynamoDB Local gives CapacityUnits only). */
function unitsOf(c: Consumed, isRead: boolean): { r: number; w: number; gsi: number } {
  const total = c.CapacityUnits ?? 0;
  const r = c.ReadCapacityUnits ?? (isRead ? total : 0);
  const w = c.WriteCapacityUnits ?? (isRead ? 0 : total);
  let gsi = 0;
  for (const index of Object.values(c.GlobalSecondaryIndexes ?? {}))
    gsi += (isRead ? index.ReadCapacityUnits : index.WriteCapacityUnits) ?? index.CapacityUnits ?? 0;
  return { r, w, gsi };
}

const add = (a: number, b: number) => Math.round((a + b) * 1000) / 1000;

type Input = Record<string, unknown> & {
  Key?: Record<string, unknown>;
  Item?: Record<string, unknown>;
  TransactItems?: Array<Partial<Record<'Update' | 'ConditionCheck' | 'Put' | 'Delete', { Key?: Record<string, unknown> }>>>;
  ReturnConsumedCapacity?: string;
};

const isCounter = (key: Record<string, unknown> | undefined) =>
  typeof key?.pk === 'string' && key.pk.startsWith('POOL#') && key.sk === 'POOL';
const isWaiter = (key: Record<string, unknown> | undefined) => typeof key?.sk === 'string' && key.sk.startsWith('WAIT#');

export class CapacityMeter {
  /** Totals by caller (benchScope: `reconciler`, `poolAdmin`; `functions` for everything Sluice's functions do). */
  readonly totals = new Map<string, CapacityTotals>();
  /** Units of one counter item in a transaction, by how it takes part (set by calibrateCounter; 2 by DynamoDB's rules). */
  unitsPerCounterCheck = 2;
  unitsPerCounterUpdate = 2;
  /** Units of one holders-index write made by a transaction (DynamoDB Local reports 2 for a transaction's one index write). */
  unitsPerIndexWriteInTransaction = 2;

  /** Adds the middleware to one of Sluice's DynamoDB clients (the document client shares its stack). */
  instrument(client: unknown): void {
    (client as MiddlewareClient).middlewareStack.add(
      (next, context) => async (args) => {
        const op = (context.commandName ?? 'Unknown').replace(/Command$/, '');
        const input = ((args as { input?: Input }).input ?? {}) as Input;
        if (WITH_CAPACITY.has(op)) input.ReturnConsumedCapacity = 'INDEXES';
        const caller = callerOf();
        try {
          const result = await next(args);
          this.record(caller, op, input, (result.output as { ConsumedCapacity?: Consumed | Consumed[] } | undefined)?.ConsumedCapacity);
          return result;
        } catch (error) {
          this.recordFailure(caller, op, input);
          throw error;
        }
      },
      { step: 'initialize', name: 'sluiceBenchCapacity' },
    );
  }

  /** A deep copy of the totals now (subtract an earlier one with `since`). */
  snapshot(): Map<string, CapacityTotals> {
    return new Map([...this.totals].map(([k, t]) => [k, JSON.parse(JSON.stringify(t)) as CapacityTotals]));
  }

  private totalsOf(caller: string): CapacityTotals {
    let t = this.totals.get(caller);
    if (!t) this.totals.set(caller, (t = emptyTotals()));
    return t;
  }

  private label(op: string, input: Input): string {
    const item = itemOf(op, input as never);
    return item ? `${op} ${item}` : op;
  }

  private record(caller: string, op: string, input: Input, consumed: Consumed | Consumed[] | undefined): void {
    const t = this.totalsOf(caller);
    const isRead = READ_OPS.has(op);
    let r = 0;
    let w = 0;
    let gsi = 0;
    for (const c of consumed === undefined ? [] : Array.isArray(consumed) ? consumed : [consumed]) {
      const u = unitsOf(c, isRead);
      r += u.r;
      w += u.w;
      gsi += u.gsi;
    }
    t.calls++;
    t.wcuReported = add(t.wcuReported, w);
    t.rcu = add(t.rcu, r);
    if (isRead) t.gsiRcu = add(t.gsiRcu, gsi);
    else t.gsiWcuReported = add(t.gsiWcuReported, gsi);
    if (op === 'TransactWriteItems') {
      // DynamoDB's rule, not DynamoDB Local's figure: 2 units per item (under 1 KB), and the index entries it changes.
      const tx = slotChangeOf(input as never);
      const indexWrites = INDEX_WRITES[tx.change] * this.unitsPerIndexWriteInTransaction;
      // The ended index's entry of a job a release ends, at the rate of the holders entries beside it.
      const endedWrites = endedEntriesOf(op, input as never).length * this.unitsPerIndexWriteInTransaction;
      w = 2 * tx.items + indexWrites + endedWrites;
      t.gsiWcu = add(t.gsiWcu, indexWrites);
      t.endedWcu = add(t.endedWcu, endedWrites);
      if (tx.counter === 'check') t.counterWcu = add(t.counterWcu, this.unitsPerCounterCheck);
      else if (tx.counter === 'update') t.counterWcu = add(t.counterWcu, this.unitsPerCounterUpdate);
    } else if (!isRead) {
      // A plain write that ends a job: DynamoDB Local reports its ended entry among the index units (1 per entry).
      const ended = Math.min(gsi, endedEntriesOf(op, input as never).length);
      t.endedWcu = add(t.endedWcu, ended);
      t.gsiWcu = add(t.gsiWcu, gsi - ended);
      t.largestPlainWriteUnits = Math.max(t.largestPlainWriteUnits, w - gsi);
    }
    t.wcu = add(t.wcu, w);
    // The pool's partition key: its counter item (a transaction's counter share is counted above) and its waiters.
    const pk = String((input.ExpressionAttributeValues as Record<string, unknown> | undefined)?.[':pk'] ?? '');
    if (op === 'TransactWriteItems') {
      // counted above
    } else if (isCounter(input.Key) || isCounter(input.Item)) {
      if (isRead) t.counterRcu = add(t.counterRcu, r);
      else t.counterWcu = add(t.counterWcu, w);
    } else if (isWaiter(input.Key) || isWaiter(input.Item)) {
      t.waiterWcu = add(t.waiterWcu, w);
    } else if (op === 'Query' && !input.IndexName && pk.startsWith('POOL#')) {
      t.waiterRcu = add(t.waiterRcu, r);
    }
    const cell = (t.byCall[this.label(op, input)] ??= { calls: 0, failed: 0, wcu: 0, rcu: 0 });
    cell.calls++;
    cell.wcu = add(cell.wcu, w);
    cell.rcu = add(cell.rcu, r);
  }

  private recordFailure(caller: string, op: string, input: Input): void {
    const t = this.totalsOf(caller);
    t.calls++;
    const cell = (t.byCall[this.label(op, input)] ??= { calls: 0, failed: 0, wcu: 0, rcu: 0 });
    cell.calls++;
    cell.failed++;
    if (READ_OPS.has(op)) return;
    t.failedWrites++;
    if (op === 'TransactWriteItems') {
      const items = input.TransactItems ?? [];
      t.failedWcuEstimate = add(t.failedWcuEstimate, 2 * items.length);
      const counters = items.filter((item) => isCounter((item.Update ?? item.ConditionCheck)?.Key)).length;
      t.failedCounterWcuEstimate = add(t.failedCounterWcuEstimate, 2 * counters);
    } else {
      t.failedWcuEstimate = add(t.failedWcuEstimate, 1);
      if (isCounter(input.Key) || isCounter(input.Item)) t.failedCounterWcuEstimate = add(t.failedCounterWcuEstimate, 1);
    }
  }
}

/** `a - b`, field by field (b: an earlier snapshot of the same caller, or nothing). */
export function since(a: CapacityTotals | undefined, b: CapacityTotals | undefined): CapacityTotals {
  const out = emptyTotals();
  const x = a ?? emptyTotals();
  const y = b ?? emptyTotals();
  for (const key of Object.keys(out) as Array<keyof CapacityTotals>) {
    if (key === 'byCall') continue;
    (out[key] as number) = Math.round(((x[key] as number) - (y[key] as number)) * 1000) / 1000;
  }
  out.largestPlainWriteUnits = x.largestPlainWriteUnits; // a maximum so far, not a count
  for (const [label, cell] of Object.entries(x.byCall)) {
    const before = y.byCall[label] ?? { calls: 0, failed: 0, wcu: 0, rcu: 0 };
    const d = {
      calls: cell.calls - before.calls,
      failed: cell.failed - before.failed,
      wcu: Math.round((cell.wcu - before.wcu) * 1000) / 1000,
      rcu: Math.round((cell.rcu - before.rcu) * 1000) / 1000,
    };
    if (d.calls > 0) out.byCall[label] = d;
  }
  return out;
}
