import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/**
 * `sluice check FILE --stage S`, through the bin as a user runs it: what stage S, deployed with its settings file,
 * would refuse of a file of job specs or a job sets file, before anything is sent or deployed.
 */
const ROOT = path.resolve(__dirname, '../../..');
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'sluice-check-'));
  // Stage acme allows its own names and pools.
  await writeFile(
    path.join(dir, 'acme.yml'),
    `pools: '{"default": 4, "flows": 8, "etl": 2}'\nallowedFlowPattern: 'partner-*'\nallowedGlueJobPattern: 'compact-*'\nkeyLimits: '{"org": 2}'\noverrides: '{"glue": {"arguments": ["--table"]}}'\n`,
  );
});
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

function sluice(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [path.join(ROOT, 'bin/sluice.cjs'), ...args],
      { cwd: ROOT, env: { ...process.env, SLUICE_STAGE_CONFIG_DIR: dir }, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

test('job specs: each refusal names the job, the field, the setting and the file to change; exit 1', async () => {
  const file = path.join(dir, 'jobs.jsonl');
  await writeFile(
    file,
    [
      '{"kind":"appflow","id":"ok-1","pool":"flows","flowName":"partner-001"}',
      '{"kind":"appflow","id":"named-1","pool":"flows","flowName":"salesforce-accounts"}',
      '{"kind":"glue","id":"pooled-1","pool":"crm","jobName":"compact-events","limits":["tenant:a"]}',
      '{"kind":"appflow","id":"typo-1","flowname":"partner-002"}',
      '{"kind":"glue","id":"script-1","pool":"etl","jobName":"compact-x","arguments":{"--extra-py-files":"s3://x/y.py"}}',
    ].join('\n'),
  );
  const { code, stdout } = await sluice('check', file, '--stage', 'acme');
  expect(code).toBe(1);
  expect(stdout).toContain(
    "job 'named-1':\n  flowName 'salesforce-accounts' does not match allowedFlowPattern 'partner-*': IAM refuses it on stage acme (set allowedFlowPattern in shared/config/stages/acme.yml)",
  );
  expect(stdout).toContain("pool 'crm' is not among the stage's pools (default, flows, etl)");
  expect(stdout).toContain("keyed limit 'tenant:a' has no default for 'tenant'");
  expect(stdout).toMatch(/job 'typo-1':\n {2}.*Unrecognized key: "flowname"/);
  expect(stdout).toContain("job 'script-1':\n  override arguments '--extra-py-files' is not allowed on this stage");
  expect(stdout).not.toContain("job 'ok-1'");
  expect(stdout).toContain('stage acme would refuse 4 of 5 jobs');
}, 120_000);

test("a job sets file: the example's sets pass on a stage that allows them, and fail on Sluice's defaults", async () => {
  const acme = await sluice('check', 'docs/examples/jobs.yml', '--stage', 'acme');
  expect([acme.code, acme.stdout.trim()]).toEqual([0, 'stage acme would take all 121 jobs']);
  const dev = await sluice('check', 'docs/examples/jobs.yml', '--stage', 'dev', '--json');
  expect(dev.code).toBe(1);
  const report = JSON.parse(dev.stdout) as { checked: number; refused: Array<{ job: string; reasons: string[] }> };
  expect(report.checked).toBe(121);
  expect(report.refused).toHaveLength(121);
  expect(report.refused[0]!.reasons[0]).toMatch(/allowedFlowPattern 'sluice-\*'/);
}, 120_000);
