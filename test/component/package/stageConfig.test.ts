import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/**
 * A stage's settings live in a short file of their own (shared/config/stages/<stage>.yml; SLUICE_STAGE_CONFIG_DIR here),
 * not in serverless.yml: `npm run package` puts what it sets into the stage's template, keeps every default it does not
 * set, and refuses a misspelt setting with the fix, in one line and no stack trace.
 */
const ROOT = path.resolve(__dirname, '../../..');
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'sluice-stages-'));
});
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

function packageStage(stage: string, out: string): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [path.join(ROOT, 'bin/package.cjs'), '--stage', stage, '--package', out],
      { cwd: ROOT, env: { ...process.env, SLUICE_STAGE_CONFIG_DIR: dir }, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, output: stdout + stderr }),
    );
  });
}

type Template = { Resources: Record<string, { Properties?: Record<string, unknown> }> };

test("the example stage file's settings reach the template; what it does not set keeps its default", async () => {
  const kmsKey = 'arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab';
  await writeFile(
    path.join(dir, 'prod.yml'),
    `${await readFile(path.join(ROOT, 'docs/examples/stage.yml'), 'utf8')}\nlogsKmsKeyArn: ${kmsKey}\n`,
  );
  const out = path.join(dir, 'out-prod');
  const { code, output } = await packageStage('prod', out);
  expect([code, code === 0 ? '' : output]).toEqual([0, '']);
  const template = JSON.parse(await readFile(path.join(out, 'cloudformation-template-update-stack.json'), 'utf8')) as Template;
  const env = (template.Resources.AcquirerLambdaFunction!.Properties!.Environment as { Variables: Record<string, unknown> }).Variables;
  expect(JSON.parse(env.POOLS as string)).toEqual({ default: 4, flows: 8, etl: 2 });
  expect(JSON.parse(env.KEY_LIMITS as string)).toEqual({ org: 2 });
  const text = JSON.stringify(template);
  expect(text).toContain('flow/partner-*');
  expect(text).not.toContain('flow/sluice-*');
  // Not set in the file: Sluice's default.
  expect((template.Resources.JobQueue!.Properties!.RedrivePolicy as { maxReceiveCount: number }).maxReceiveCount).toBe(5);
  // The log groups' key, a setting with no default.
  const logGroups = Object.values(template.Resources).filter((r) => (r as { Type?: string }).Type === 'AWS::Logs::LogGroup');
  expect(logGroups.length).toBeGreaterThan(0);
  for (const group of logGroups) expect(group.Properties!.KmsKeyId).toBe(kmsKey);
  // Its job sets' schedules are in the template too.
  expect(Object.keys(template.Resources).some((id) => id.startsWith('JobSetSchedule'))).toBe(true);
}, 300_000);

test('a misspelt setting, or a map where JSON text is expected, is refused with the fix and no stack trace', async () => {
  await writeFile(
    path.join(dir, 'typo.yml'),
    'alowedFlowPattern: acme-*\npools: { flows: 4 }\n' +
      // Text, but not what the functions parse: refused here rather than at every function's cold start.
      `keyLimits: '{"org": -1}'\nrates: '{"flows": "fast"}'\noverrides: '{"glue": {"scriptLocation": true}}'\n`,
  );
  const { code, output } = await packageStage('typo', path.join(dir, 'out-typo'));
  expect(code).not.toBe(0);
  expect(output).toContain("unknown setting 'alowedFlowPattern' (did you mean 'allowedFlowPattern'?)");
  expect(output).toContain(`'pools' must be a string, a number or true/false: write it as JSON in quotes, e.g. pools: '{"flows":4}'`);
  expect(output).toContain("'keyLimits': KEY_LIMITS is invalid: org:");
  expect(output).toContain(`'rates': RATES is invalid: flows: "fast" is not a rate such as "2/s" or "30/m"`);
  expect(output).toContain("'overrides': OVERRIDES: glue has no setting 'scriptLocation'");
  expect(output).not.toMatch(/^\s+at /m);
}, 300_000);

test("the framework's own AWS calls print no Node version notice on Node 20, as sluice does", async () => {
  // What a deployer's shell has: credentials, and none of the settings the tests set (jest.config.ts turns it off).
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    AWS_ACCESS_KEY_ID: 'x',
    AWS_SECRET_ACCESS_KEY: 'y',
    // `info` asks CloudFormation for the stack: here a closed port, so the SDK's call is made and refused at once.
    AWS_ENDPOINT_URL: 'http://127.0.0.1:9',
    AWS_MAX_ATTEMPTS: '1',
  };
  delete env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED;
  delete env.SLUICE_SDK_NODE_WARNING;
  const output = await new Promise<string>((resolve) => {
    execFile(
      process.execPath,
      [path.join(ROOT, 'node_modules/osls/bin/serverless.js'), 'info', '--stage', 'dev'],
      { cwd: ROOT, env, maxBuffer: 16 * 1024 * 1024 },
      (_error, stdout, stderr) => resolve(stdout + stderr),
    );
  });
  expect(output).toContain('ECONNREFUSED 127.0.0.1:9');
  expect(output).not.toContain('NodeVersionSupportWarning');
}, 120_000);
