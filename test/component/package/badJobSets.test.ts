import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/** `npm run package` with a bad job sets file, as a user runs it: the message naming the set and the job, and no stack. */

const ROOT = path.resolve(__dirname, '../../..');

test('a bad sets file fails the packaging with its message alone (no stack trace), exit 1, before anything is built', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'sluice-bad-sets-'));
  try {
    const bad = path.join(dir, 'jobs.yml');
    await writeFile(bad, 'sets:\n  - { name: nightly, schedule: rate(1 day), jobs: [{ kind: appflow, flowName: a }, { kind: glue }] }\n');
    const { code, output } = await new Promise<{ code: number; output: string }>((resolve) =>
      execFile(
        process.execPath,
        [path.join(ROOT, 'bin/package.cjs'), '--stage', 'badsets', '--package', path.join(dir, 'out'), `--param=jobSetsFile=${bad}`],
        { cwd: ROOT, timeout: 240_000 },
        (error, stdout, stderr) => resolve({ code: error ? Number((error as { code?: number }).code) : 0, output: `${stdout}\n${stderr}` }),
      ),
    );
    expect(code).toBe(1);
    expect(output).toContain(`${bad}: set 'nightly', job 2: jobName: required (string)`);
    expect(output).not.toMatch(/^\s+at /m);
    expect(output).not.toContain('InvalidJobSetsError');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}, 300_000);
