import { execFile } from 'node:child_process';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/** `npm test`'s pretest (bin/check-chromium.cjs): no Chromium for the dashboard test is one line saying what to install. */

const SCRIPT = path.resolve(__dirname, '../../../bin/check-chromium.cjs');
let tmp: string;

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'sluice-chromium-'));
});
afterAll(() => rm(tmp, { recursive: true, force: true }));

function check(chromium: string): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [SCRIPT], { env: { ...process.env, SLUICE_CHROMIUM: chromium } }, (error, _stdout, stderr) =>
      resolve({ code: error ? Number(error.code) : 0, stderr }),
    );
  });
}

/** A stand-in binary answering `--version` with this line. */
async function fakeBrowser(versionLine: string): Promise<string> {
  const file = path.join(tmp, `browser-${Math.random().toString(36).slice(2)}`);
  await writeFile(file, `#!/bin/sh\necho '${versionLine}'\n`);
  await chmod(file, 0o755);
  return file;
}

test('no such binary: exit 1 with one line naming Chromium and how to install it', async () => {
  const { code, stderr } = await check(path.join(tmp, 'no-such-chromium'));
  expect(code).toBe(1);
  expect(stderr.trimEnd().split('\n')).toHaveLength(1);
  expect(stderr).toMatch(
    /^npm test: the dashboard test needs Chromium, and SLUICE_CHROMIUM=.*no-such-chromium: no such file: .*apt-get install chromium/,
  );
});

test('a binary that is not Chromium: exit 1 saying what it answered', async () => {
  const { code, stderr } = await check(await fakeBrowser('Mozilla Firefox 128.0'));
  expect(code).toBe(1);
  expect(stderr).toContain('does not answer as Chromium does');
  expect(stderr).toContain('Mozilla Firefox 128.0');
});

test("Debian's Chromium and Google Chrome pass silently", async () => {
  expect(await check(await fakeBrowser('Chromium 156.0.8078.108 built on Debian GNU/Linux 12 (bookworm)'))).toEqual({
    code: 0,
    stderr: '',
  });
  expect(await check(await fakeBrowser('Google Chrome 147.0.7727.55'))).toEqual({ code: 0, stderr: '' });
});
