import { spawnEmulators } from '../../support/spawnEmulators';

/**
 * The fault tests share one pair of emulators, like the integration tests; when both projects run in one jest
 * invocation, the integration project's globalSetup (which runs first) has started them already and they are reused.
 * A file that restarts emulators spawns its own (test/support/controlledEmulators.ts).
 */
export default async function globalSetup(): Promise<void> {
  if (process.env.SLUICE_TEST_SQS_ENDPOINT && process.env.SLUICE_TEST_DYNAMODB_ENDPOINT) return;
  const emulators = await spawnEmulators();
  (globalThis as { __SLUICE_FAULT_EMULATORS__?: unknown }).__SLUICE_FAULT_EMULATORS__ = emulators;
  process.env.SLUICE_TEST_SQS_ENDPOINT = emulators.sqsEndpoint;
  process.env.SLUICE_TEST_DYNAMODB_ENDPOINT = emulators.dynamodbEndpoint;
}
