import type { SpawnedEmulators } from '../../support/spawnEmulators';

/** Stops the emulators only if this project's globalSetup started them. */
export default async function globalTeardown(): Promise<void> {
  await (globalThis as { __SLUICE_FAULT_EMULATORS__?: SpawnedEmulators }).__SLUICE_FAULT_EMULATORS__?.stop();
}
