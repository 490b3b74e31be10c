import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { JobSpecSchema } from '../../../shared/kinds/registry';

/**
 * The job message schema a producer in another language checks against: `sluice schema` prints it, through the bin as
 * a user runs it; docs/job-message.schema.json is that output, kept equal here; and the Python example producer,
 * validating with it (jsonschema), accepts and refuses exactly what the acquirer's own schemas do, over samples of every
 * kind and the mistakes people make (a misspelt field, a missing one, a wrong type, a bad id).
 */
const ROOT = path.resolve(__dirname, '../../..');
const SCHEMA_FILE = path.join(ROOT, 'docs/job-message.schema.json');
const exec = promisify(execFile);

const ARN = 'arn:aws:states:eu-west-1:123456789012:stateMachine:sluice-orders';
const GOOD: Record<string, unknown>[] = [
  { kind: 'appflow', id: 'sf-1', flowName: 'sluice-accounts' },
  { kind: 'appflow', flowName: 'sluice-accounts', pool: 'flows', priority: 5, fairnessKey: 'acme' },
  { kind: 'glue', id: 'g-1', jobName: 'sluice-nightly', arguments: { '--day': '2026-11-22' }, weight: 10, limits: ['org:acme'] },
  { kind: 'sfn', id: 's-1', stateMachineArn: ARN, input: { order: 42 } },
  { kind: 'ecs', id: 'e-1', cluster: 'sluice-jobs', taskDefinition: 'sluice-report:3' },
  { kind: 'batch', id: 'b-1', jobQueue: 'sluice-queue', jobDefinition: 'sluice-def' },
  { kind: 'callback', id: 'c-1', target: { lambda: 'sluice-worker' }, timeoutSeconds: 600, payload: { day: 1 } },
  { kind: 'appflow', id: 'later-1', flowName: 'sluice-accounts', notBefore: '2026-11-27T02:00:00+01:00' },
  { kind: 'glue', id: 'g-2', jobName: 'sluice-émoji-\u{1F680}', arguments: { '--note': 'line 1\nline 2 \u{1F600}' } }, // astral and newline
];
const BAD: Record<string, unknown>[] = [
  { kind: 'appflow', id: 'a-1', flowname: 'sluice-accounts' }, // misspelt
  { kind: 'appflow', id: 'a-2' }, // missing flowName
  { kind: 'glue', id: 'a-3', jobName: 7 }, // wrong type
  { kind: 'appflow', id: 'has space', flowName: 'x' }, // bad id
  { kind: 'appflow', id: 'a-4', flowName: 'x', weight: 0 }, // weight out of range
  { kind: 'appflow', id: 'a-5', flowName: 'x', priority: 1.5 }, // not whole
  { kind: 'appflow', id: 'a-6', flowName: 'x', notBefore: 'tomorrow' },
  { kind: 'teleport', id: 'a-7' }, // no such kind
  { kind: 'callback', id: 'a-8', target: { lambda: 'sluice-worker' } }, // no timeout
  { kind: 'sfn', id: 'a-9', stateMachineArn: 'orders' },
  { kind: 'glue', id: 'a-10', jobName: 'sluice-\u0007bell' }, // a control character SQS refuses
  { kind: 'glue', id: 'a-11', jobName: 'x', arguments: { '--a': 'no \uFFFF here' } },
];

test('`sluice schema` prints the job message schema, and docs/job-message.schema.json is its output', async () => {
  const { stdout } = await exec(process.execPath, [path.join(ROOT, 'bin/sluice.cjs'), 'schema'], { cwd: ROOT });
  const printed = JSON.parse(stdout) as { oneOf: Array<{ properties: { kind: { const: string } }; required: string[] }> };
  // Every kind, none requiring an id (a message without one is keyed by its SQS message id).
  expect(printed.oneOf.map((v) => v.properties.kind.const).sort()).toEqual(['appflow', 'batch', 'callback', 'ecs', 'glue', 'sfn']);
  expect(printed.oneOf.every((v) => !v.required.includes('id'))).toBe(true);
  // Regenerate with: node bin/sluice.cjs schema > docs/job-message.schema.json
  expect(JSON.parse(await readFile(SCHEMA_FILE, 'utf8'))).toEqual(printed);
}, 120_000);

test('the Python producer accepts and refuses what the acquirer does', async () => {
  for (const spec of GOOD) expect([spec, JobSpecSchema.safeParse({ id: 'x', ...spec }).success]).toEqual([spec, true]);
  for (const spec of BAD) expect([spec, JobSpecSchema.safeParse(spec).success]).toEqual([spec, false]);
  const script = [
    'import importlib.util, json, sys',
    `spec = importlib.util.spec_from_file_location("producer", ${JSON.stringify(path.join(ROOT, 'docs/examples/producer.py'))})`,
    'producer = importlib.util.module_from_spec(spec); spec.loader.exec_module(producer)',
    'validators = producer.load_validators()',
    'assert validators is not None, "jsonschema is not installed"',
    'print(json.dumps([producer.refusals(validators, s) for s in json.load(sys.stdin)]))',
  ].join('\n');
  const child = execFile('python3', ['-c', script], { cwd: ROOT });
  child.stdin!.end(JSON.stringify([...GOOD, ...BAD]));
  const stdout = await new Promise<string>((resolve, reject) => {
    let out = '';
    let err = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`python3 exited ${code}: ${err}`))));
  });
  const refusals = JSON.parse(stdout) as string[][];
  expect(refusals.slice(0, GOOD.length)).toEqual(GOOD.map(() => []));
  const bad = refusals.slice(GOOD.length);
  expect(BAD.filter((_, i) => bad[i]!.length === 0)).toEqual([]);
  // A misspelt field is named.
  expect(bad[0]!.join(' ')).toMatch(/flowname/);
}, 120_000);
