import { execFile } from 'node:child_process';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/** `npm test`'s pretest (bin/check-java.cjs): no Java, or an old one, is one line saying what to install. */

const SCRIPT = path.resolve(__dirname, '../../../bin/check-java.cjs');
let tmp: string;

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'sluice-java-'));
});
afterAll(() => rm(tmp, { recursive: true, force: true }));

function check(java: string): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [SCRIPT], { env: { ...process.env, SLUICE_JAVA: java } }, (error, _stdout, stderr) =>
      resolve({ code: error ? Number(error.code) : 0, stderr }),
    );
  });
}

/** A stand-in `java` printing the version line of a given release, as java does (on stderr). */
async function fakeJava(versionLine: string): Promise<string> {
  const file = path.join(tmp, `java-${Math.random().toString(36).slice(2)}`);
  await writeFile(file, `#!/bin/sh\necho '${versionLine}' >&2\n`);
  await chmod(file, 0o755);
  return file;
}

test('no java: exit 1 with one line naming Java 17 and how to install it', async () => {
  const { code, stderr } = await check(path.join(tmp, 'no-such-java'));
  expect(code).toBe(1);
  expect(stderr.trimEnd().split('\n')).toHaveLength(1);
  expect(stderr).toMatch(
    /^npm test: the DynamoDB Local tests need Java 17 or later, and `.*no-such-java` was not found: .*openjdk-17-jre-headless/,
  );
});

test('Java 8 or 11: exit 1 saying which was found', async () => {
  expect(await check(await fakeJava('java version "1.8.0_381"'))).toEqual({ code: 1, stderr: expect.stringContaining('found Java 8') });
  expect(await check(await fakeJava('openjdk version "11.0.2" 2019-01-15'))).toEqual({
    code: 1,
    stderr: expect.stringContaining('found Java 11'),
  });
});

test('Java 17 and 21 pass silently', async () => {
  expect(await check(await fakeJava('openjdk version "17.0.15" 2025-04-15'))).toEqual({ code: 0, stderr: '' });
  expect(await check(await fakeJava('openjdk version "21" 2023-09-19'))).toEqual({ code: 0, stderr: '' });
});
