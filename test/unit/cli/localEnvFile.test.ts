import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { formatAge } from '../../../shared/cli/formatInspect';
import { LocalStackRunningError } from '../../../shared/errors';
import { claimLocalEnvFile, formatLocalEnv, parseLocalEnv, readLiveLocalEnv } from '../../../shared/cli/localEnvFile';

let tmp: string;
beforeEach(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'sluice-envfile-'));
});
afterEach(() => rm(tmp, { recursive: true, force: true }));

/** A pid no process has: above Linux's pid_max. */
const DEAD_PID = 2 ** 22 + 1;

test('the file round-trips, quotes included, and a shell can source it', () => {
  const vars = { SLUICE_TABLE: 'sluice-local', ODD: "it's $HOME" };
  const text = formatLocalEnv({ pid: 42, vars });
  expect(text).toContain(`export ODD='it'\\''s $HOME'`);
  expect(parseLocalEnv(text)).toEqual({ pid: 42, vars });
});

test('a live owner keeps a second stack out; a dead one is taken over; release removes only its own file', async () => {
  const file = path.join(tmp, 'nested', 'local.env');
  const first = await claimLocalEnvFile(file);
  await first.publish({ AWS_ENDPOINT_URL_SQS: 'http://127.0.0.1:8471', SLUICE_TABLE: 't' });
  expect(await readLiveLocalEnv(file)).toEqual({
    pid: process.pid,
    vars: { AWS_ENDPOINT_URL_SQS: 'http://127.0.0.1:8471', SLUICE_TABLE: 't' },
  });
  await expect(claimLocalEnvFile(file, process.pid + 1)).rejects.toThrow(LocalStackRunningError);
  await expect(claimLocalEnvFile(file, process.pid + 1)).rejects.toThrow(
    `a local stack is already running (pid ${process.pid}, http://127.0.0.1:8471;`,
  );

  // A file left by a process that died (kill -9) is stale: sluice ignores it and a new stack takes it.
  await writeFile(file, formatLocalEnv({ pid: DEAD_PID, vars: { SLUICE_TABLE: 'old' } }));
  expect(await readLiveLocalEnv(file)).toBeUndefined();
  const second = await claimLocalEnvFile(file);
  await second.publish({ SLUICE_TABLE: 'new' });
  await first.release(); // same pid here, so it is this process's file: removed
  await expect(readFile(file, 'utf8')).rejects.toMatchObject({ code: 'ENOENT' });

  await writeFile(file, formatLocalEnv({ pid: DEAD_PID, vars: { SLUICE_TABLE: 'other' } }));
  await second.release(); // not its file any more: left alone
  expect(parseLocalEnv(await readFile(file, 'utf8'))?.pid).toBe(DEAD_PID);
});

test.each([
  [0, '0s'],
  [45_999, '45s'],
  [245_000, '4m 05s'],
  [2 * 3600_000 + 3 * 60_000, '2h 03m'],
  [3 * 86_400_000 + 4 * 3600_000, '3d 04h'],
  [-5, '0s'],
])('age %d ms is %s', (ms, text) => {
  expect(formatAge(ms)).toBe(text);
});
