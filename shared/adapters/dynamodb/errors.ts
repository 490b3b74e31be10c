/** True for DynamoDB's "your condition did not hold" answer, the normal outcome of a lost race. */
export function isConditionalCheckFailed(error: unknown): boolean {
  return (error as { name?: string } | null)?.name === 'ConditionalCheckFailedException';
}
