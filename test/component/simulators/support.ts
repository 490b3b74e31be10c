import { AppflowClient } from '@aws-sdk/client-appflow';
import { GlueClient } from '@aws-sdk/client-glue';
import type { JobApiSimulator } from '../../../local/simulators';

/**
 * Resolves with the first truthy value of `probe`, polling every few ms; rejects after `timeoutMs`.
 * A wait on a condition with a deadline, never a fixed sleep.
 */
export async function waitFor<T>(probe: () => T | Promise<T>, timeoutMs = 3000, what = 'condition'): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`waitFor: ${what} not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

export const credentials = { accessKeyId: 'x', secretAccessKey: 'x' };

/** Real SDK clients pointed at the simulator. maxAttempts 1 (default) so the SDK's own retry does not hide an error. */
export function sdkClients(sim: JobApiSimulator, maxAttempts = 1) {
  const config = { endpoint: sim.endpoint, region: 'us-east-1', credentials, maxAttempts };
  const appflow = new AppflowClient(config);
  const glue = new GlueClient(config);
  return {
    appflow,
    glue,
    destroy() {
      appflow.destroy();
      glue.destroy();
    },
  };
}

/** The error a promise rejects with (fails the test if it resolves). */
export async function rejection(p: Promise<unknown>): Promise<Error & { $metadata?: { httpStatusCode?: number } }> {
  try {
    await p;
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected the call to fail, but it succeeded');
}
