/** True for DynamoDB's "your condition did not hold" answer, the normal outcome of a lost race. */
export function isConditionalCheckFailed(error: unknown): boolean {
  return (error as { name?: string } | null)?.name === 'ConditionalCheckFailedException';
}

/** Runs a conditional write: true if it was applied, false if its condition did not hold; other errors are thrown. */
export async function applied(write: Promise<unknown>): Promise<boolean> {
  try {
    await write;
    return true;
  } catch (error) {
    if (isConditionalCheckFailed(error)) return false;
    throw error;
  }
}

/** Why each item of a cancelled transaction failed (DynamoDB's CancellationReasons, in item order). */
export interface CancellationReason {
  Code?: string;
  Item?: Record<string, unknown>;
}

/** The cancellation reasons of a TransactionCanceledException, or undefined for any other error. */
export function cancellationReasons(error: unknown): CancellationReason[] | undefined {
  const e = error as { name?: string; CancellationReasons?: CancellationReason[] } | null;
  return e?.name === 'TransactionCanceledException' ? (e.CancellationReasons ?? []) : undefined;
}

export const failedCondition = (reason: CancellationReason | undefined) => reason?.Code === 'ConditionalCheckFailed';
