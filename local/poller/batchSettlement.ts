import type { SQSRecord } from 'aws-lambda';

/** How an invocation ended, from the event source mapping's point of view. */
export const BatchOutcome = {
  Succeeded: 'succeeded',
  PartiallyFailed: 'partially-failed',
  Failed: 'failed',
} as const;
export type BatchOutcome = (typeof BatchOutcome)[keyof typeof BatchOutcome];

export type HandlerResult = { threw: true; error: unknown } | { threw: false; value: unknown };

export interface BatchSettlement {
  outcome: BatchOutcome;
  /** Records whose messages the mapping deletes; the others reappear when their visibility timeout ends. */
  toDelete: SQSRecord[];
}

/**
 * Lambda's rules (docs: "Reporting batch item failures"): a thrown error or timeout fails the whole batch. With
 * ReportBatchItemFailures, a missing or null response or batchItemFailures list is full success, and a failure entry
 * whose itemIdentifier is missing, empty or not in the batch fails the whole batch. Without it, the response is ignored.
 */
export function settleBatch(records: readonly SQSRecord[], result: HandlerResult, reportBatchItemFailures = true): BatchSettlement {
  const all = { outcome: BatchOutcome.Succeeded, toDelete: [...records] };
  const none = { outcome: BatchOutcome.Failed, toDelete: [] };
  if (result.threw) return none;
  if (!reportBatchItemFailures || result.value === undefined || result.value === null) return all;
  // A response that is not an object cannot be read as a batch response: Lambda calls that invalid (inferred).
  if (typeof result.value !== 'object' || Array.isArray(result.value)) return none;
  const failures = (result.value as { batchItemFailures?: unknown }).batchItemFailures;
  if (failures === undefined || failures === null) return all;
  if (!Array.isArray(failures)) return none;

  const ids = new Set(records.map((record) => record.messageId));
  const failed = new Set<string>();
  for (const failure of failures as unknown[]) {
    const id = (failure as { itemIdentifier?: unknown } | null)?.itemIdentifier;
    if (typeof id !== 'string' || !ids.has(id)) return none; // covers missing, null, empty and unknown identifiers
    failed.add(id);
  }
  const toDelete = records.filter((record) => !failed.has(record.messageId));
  const outcome = failed.size === 0 ? BatchOutcome.Succeeded : toDelete.length === 0 ? BatchOutcome.Failed : BatchOutcome.PartiallyFailed;
  return { outcome, toDelete };
}
