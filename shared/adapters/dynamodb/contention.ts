import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { cancellationReasons, failedCondition } from './errors';

/*
 * Contention on a hot item. DynamoDB rejects a PutItem, UpdateItem or DeleteItem of an item that an ongoing
 * TransactWriteItems holds (TransactionConflictException), and cancels a transaction that meets another ongoing
 * transaction on one of its items (TransactionCanceledException, reason TransactionConflict) or found too little
 * capacity (reasons ThrottlingError, ProvisionedThroughputExceeded). Nothing was written in any of these cases, and the SDK retries none of them
 * (only throttling and server errors): the writer must.
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html#transaction-conflict-handling
 * https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_UpdateItem.html#API_UpdateItem_Errors
 * https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html#API_TransactWriteItems_Errors
 */

/** How an adapter waits between tries (real timers and jitter in production; the explorer's own in its runs). */
export interface Backoff {
  sleep(ms: number): Promise<void>;
  /** in [0, 1) */
  random(): number;
}

export const REAL_BACKOFF: Backoff = {
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  random: () => Math.random(),
};

/** Tries of one write that keeps meeting contention, before the caller is told (ContentionError, or thrown as is). */
export const CONTENTION_TRIES = 6;
/** Full jitter between tries: up to BASE * 2^(try - 1) ms, at most CAP ms (about 1.2 s for all tries at most). */
const BASE_MS = 20;
const CAP_MS = 400;

/** The wait before try `tries + 1`, full jitter (AWS Architecture Blog, "Exponential Backoff And Jitter"). */
export function contentionDelayMs(tries: number, random: number): number {
  return Math.floor(random * Math.min(CAP_MS, BASE_MS * 2 ** (tries - 1)));
}

/** Cancellation reasons that mean "another writer, or too little capacity, right now": nothing written, try again. */
export const CONTENTION_REASONS: readonly string[] = ['TransactionConflict', 'ThrottlingError', 'ProvisionedThroughputExceeded'];

/** True when DynamoDB refused the request for another writer on its items, and nothing was written. */
export function isContention(error: unknown): boolean {
  if ((error as { name?: string } | null)?.name === 'TransactionConflictException') return true;
  const reasons = cancellationReasons(error);
  if (!reasons || reasons.some(failedCondition)) return false;
  return reasons.some((reason) => CONTENTION_REASONS.includes(reason.Code ?? ''));
}

export type Send = DynamoDBDocumentClient['send'];

/**
 * The document client's `send`, trying a request again after contention (above) with jittered backoff, up to
 * CONTENTION_TRIES in all; then the last error is thrown. Every other answer (a failed condition included) is the
 * caller's. Each adapter sends every request through it, so no write to a hot item fails for a transaction passing by.
 */
export function contentionRetrying(doc: DynamoDBDocumentClient, backoff: Backoff = REAL_BACKOFF): Send {
  const send = async (command: unknown) => {
    for (let tries = 1; ; tries++) {
      try {
        return await doc.send(command as never);
      } catch (error) {
        if (!isContention(error) || tries >= CONTENTION_TRIES) throw error;
        await backoff.sleep(contentionDelayMs(tries, backoff.random()));
      }
    }
  };
  return send as Send;
}
