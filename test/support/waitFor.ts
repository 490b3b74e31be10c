/** Waits until `check` returns a truthy value (or stops throwing), polling, and fails with `what` at the deadline. */
export async function waitFor<T>(what: string, check: () => T | Promise<T>, timeoutMs = 20_000, intervalMs = 25): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value as NonNullable<T>;
      last = value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline)
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what} (last: ${last instanceof Error ? last.message : JSON.stringify(last)})`,
      );
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
