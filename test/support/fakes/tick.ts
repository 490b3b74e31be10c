/**
 * Every fake port method awaits this before its (synchronous, hence atomic) body, so concurrent callers interleave
 * between calls exactly as they would against a remote store, never inside one.
 */
export async function tick(): Promise<void> {
  await Promise.resolve();
}
