import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { LocalStack } from '../../local/stack';
import { expectEveryJobRanOnce } from '../support/invariants';
import { startPoolStack } from '../support/poolStack';

/**
 * The Python example producer (docs/examples/producer.py, boto3) sends jobs to the local stack's queue as a producer
 * service would send them to a deployed one, with only the settings the local stack publishes (AWS_REGION, not boto3's
 * AWS_DEFAULT_REGION; the SQS endpoint): each runs once, and a bad spec is refused before anything is sent.
 */
const ROOT = path.resolve(__dirname, '../..');
const POOL = 'python';
let stack: LocalStack;
let dir: string;
beforeAll(async () => {
  stack = await startPoolStack({ [POOL]: 2 }, { defaultRunMs: 100 });
  dir = await mkdtemp(path.join(os.tmpdir(), 'sluice-producer-'));
}, 60_000);
afterAll(async () => {
  await stack?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

function runProducer(file: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    AWS_REGION: 'us-east-1',
    AWS_ENDPOINT_URL_SQS: process.env.SLUICE_TEST_SQS_ENDPOINT,
    SLUICE_QUEUE_URL: stack.queueUrl,
  };
  return new Promise((resolve) => {
    execFile('python3', [path.join(ROOT, 'docs/examples/producer.py'), file], { env }, (error, stdout, stderr) =>
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

test('jobs sent by the Python producer run once each; a misspelt spec is refused before sending', async () => {
  const ids = ['py-flow-1', 'py-glue-1', 'py-flow-2'];
  const specs = [
    { kind: 'appflow', pool: POOL, id: ids[0], flowName: `${POOL}--a` },
    { kind: 'glue', pool: POOL, id: ids[1], jobName: `${POOL}--b`, arguments: { '--day': '2026-11-22' } },
    { kind: 'appflow', pool: POOL, id: ids[2], flowName: `${POOL}--c` },
  ];
  const good = path.join(dir, 'good.jsonl');
  await writeFile(good, specs.map((s) => JSON.stringify(s)).join('\n') + '\n');
  const sent = await runProducer(good);
  expect([sent.code, sent.stderr]).toEqual([0, '']);
  expect(sent.stdout).toContain('sent 3 jobs');
  await expectEveryJobRanOnce(stack, { pool: POOL, limit: 2, ids, timeoutMs: 90_000 });

  const bad = path.join(dir, 'bad.jsonl');
  await writeFile(bad, JSON.stringify({ kind: 'appflow', pool: POOL, id: 'py-bad', flowname: `${POOL}--d` }) + '\n');
  const refused = await runProducer(bad);
  expect(refused.code).toBe(1);
  expect(refused.stderr).toMatch(/refused line 1 \(py-bad\):.*flowname/);
  expect(refused.stdout).toContain('sent 0 jobs');
}, 180_000);
