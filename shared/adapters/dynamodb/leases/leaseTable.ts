import { type DynamoDBDocumentClient, TransactWriteCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import type { Clock } from '../../../ports/clock';
import type { GateChange } from '../../../domain/limits';
import type { JobRecord } from '../../../ports/jobLedger';
import { IS_NEW } from '../conditions';
import { type Backoff, CONTENTION_REASONS, contentionRetrying, isContention, type Send } from '../contention';
import { type CancellationReason, cancellationReasons, failedCondition } from '../errors';
import { toJobItem, type UpdateParts } from '../jobItem';
import { jobKey } from '../keys';

/**
 * The table every part of the lease store (../leaseStore.ts) writes to, and how: every request through `send`
 * (contention, a transaction on the item, is tried again with backoff), every transaction through `transact`, whose
 * failed conditions are the caller's answer.
 */

export type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/** An admission that never got through: every try lost the race for `gate`'s counter. */
export interface Contended {
  contended: string;
}

/** A clock no time passes on: a caller's `now` stays the time of its writes (tests that pass fixed times). */
export const STOPPED_CLOCK: Pick<Clock, 'now'> = { now: () => 0 };

export class LeaseTable {
  /** Every request goes through it: contention (a transaction on the item) is tried again with backoff. */
  readonly send: Send;

  constructor(
    readonly doc: DynamoDBDocumentClient,
    readonly tableName: string,
    readonly retentionDays: number,
    /** How to wait between tries that met contention. */
    readonly backoff: Backoff,
    /** The callers' clock (their `now`), read again where a write waits for its turn: see `movedOn`. */
    readonly clock: Pick<Clock, 'now'> = STOPPED_CLOCK,
  ) {
    this.send = contentionRetrying(doc, this.backoff);
  }

  /** The caller's `now` (read from `clock` as the call began) moved on by the time spent since: the time it is now. */
  movedOn(now: number): () => number {
    const calledAt = this.clock.now();
    return () => now + (this.clock.now() - calledAt);
  }

  /**
   * Runs a transaction: undefined when applied, else why each item failed (some condition did). Contention is tried
   * again by `send`; contention that outlasted every try, and any other cancellation, say nothing of the items: thrown,
   * never read as a full pool, a missing one or a stale record.
   */
  async transact(items: TransactItem[]): Promise<CancellationReason[] | undefined> {
    try {
      await this.send(new TransactWriteCommand({ TransactItems: items }));
      return undefined;
    } catch (error) {
      const reasons = cancellationReasons(error);
      if (reasons?.some(failedCondition)) return reasons;
      throw error;
    }
  }

  /** Runs a write whose contention outlasting every try is an answer (Contended, naming the gate it met), not an error. */
  async contended(
    write: () => Promise<CancellationReason[] | undefined>,
    changes: GateChange[],
  ): Promise<CancellationReason[] | undefined | Contended> {
    try {
      return await write();
    } catch (error) {
      if (!isContention(error)) throw error;
      // The counter the conflict was on, if it says (the first gate otherwise: it is the job's pool).
      const at = cancellationReasons(error)?.findIndex((reason) => CONTENTION_REASONS.includes(reason.Code ?? '')) ?? -1;
      return { contended: changes[at]?.gate ?? changes[0]!.gate };
    }
  }

  /** A job record written whole, only if the job has none (a first delivery's register, made with its first move). */
  newJob(record: JobRecord): TransactItem {
    return { Put: { TableName: this.tableName, Item: toJobItem(record), ConditionExpression: IS_NEW } };
  }

  job(update: UpdateParts, jobId: string): TransactItem {
    return { Update: { TableName: this.tableName, Key: jobKey(jobId), ...update } };
  }
}
