import type { SpawnedEmulators } from '../../support/spawnEmulators';

export default async function globalTeardown(): Promise<void> {
  await (globalThis as { __SLUICE_EMULATORS__?: SpawnedEmulators }).__SLUICE_EMULATORS__?.stop();
}
