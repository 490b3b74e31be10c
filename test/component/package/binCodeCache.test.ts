import { execFile } from 'node:child_process';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * bin/sluice.cjs runs a bundle of the CLI kept in .sluice/cli/, with V8's code cache for it beside it: a command after
 * the first skips compiling the bundle. A cache V8 cannot use (another Node version, a torn write) must never break a
 * command: it is made again.
 */
const ROOT = path.resolve(__dirname, '../../..');
const BUNDLES = path.join(ROOT, '.sluice', 'cli');

function sluice(...args: string[]): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [path.join(ROOT, 'bin/sluice.cjs'), ...args], { cwd: ROOT }, (error, stdout) =>
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout }),
    );
  });
}

/** The cache of the bundle the bin runs now (the newest: a source changed meanwhile makes a new one). */
async function cacheFile(): Promise<string> {
  const caches = (await readdir(BUNDLES)).filter((name) => name.endsWith('.cjs.v8cache'));
  expect(caches).toHaveLength(1);
  return path.join(BUNDLES, caches[0]!);
}

test('a command leaves the code cache beside the bundle; a cache V8 rejects is made again and the command runs', async () => {
  const first = await sluice('--help');
  expect(first).toMatchObject({ code: 0, stdout: expect.stringContaining('Usage: sluice <command>') });
  const file = await cacheFile();
  expect((await readFile(file)).length).toBeGreaterThan(100_000);

  const garbage = Buffer.alloc(4096, 7);
  await writeFile(file, garbage);
  const again = await sluice('--help');
  expect(again).toEqual(first);
  const remade = await readFile(file);
  expect(remade.equals(garbage)).toBe(false);
  expect(remade.length).toBeGreaterThan(100_000);
});
