import { spawnEmulators } from '../../support/spawnEmulators';

/** One pair of emulators (fauxqs, dynalite) for every integration test file; each file provisions its own names. */
export default async function globalSetup(): Promise<void> {
  const emulators = await spawnEmulators();
  (globalThis as { __SLUICE_EMULATORS__?: unknown }).__SLUICE_EMULATORS__ = emulators;
  process.env.SLUICE_TEST_SQS_ENDPOINT = emulators.sqsEndpoint;
  process.env.SLUICE_TEST_DYNAMODB_ENDPOINT = emulators.dynamodbEndpoint;
}
