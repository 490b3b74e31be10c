import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { LocalStack } from '../../shared/local/stack';
import { setJobId } from '../../shared/domain/jobSets';
import { loadJobSets } from '../../shared/config/jobSetsFile';
import { expectEveryJobRanOnce } from '../support/invariants';
import { startFaultStack } from './workload';

/**
 * Job sets under faults (issue 11): a schedule that fires twice for one time, at once, and a jobSets invocation that
 * dies part way through sending a run's jobs (SQS answers its SendMessageBatch calls, then the function dies) and is
 * invoked again by EventBridge Scheduler's retry. No job is lost, none runs twice, the limit holds.
 */
const POOL = 'setfault';
const LIMIT = 3;
const JOBS = 24;

let stack: LocalStack;
let dir: string;
let file: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'sluice-set-faults-'));
  file = path.join(dir, 'jobs.yml');
  const jobs = Array.from({ length: JOBS }, (_, i) => `      - { kind: appflow, flowName: ${POOL}--${i}--150ms, key: f${i} }`).join('\n');
  await writeFile(file, `sets:\n  - name: nightly\n    schedule: cron(0 2 * * ? *)\n    pool: ${POOL}\n    jobs:\n${jobs}\n`);
  stack = await startFaultStack({ [POOL]: LIMIT }, { env: { JOB_SETS_FILE: file } });
}, 60_000);
afterAll(async () => {
  await stack?.stop();
  await rm(dir, { recursive: true, force: true });
});

const idsOf = (run: string) => loadJobSets(file)[0]!.jobs.map((job) => setJobId('nightly', run, job.key));

test('a schedule firing twice at once for the same time: every job once, the limit held', async () => {
  const at = '2026-11-27T02:00:00Z';
  await Promise.all([stack.fireJobSet('nightly', at), stack.fireJobSet('nightly', at)]);
  await expectEveryJobRanOnce(stack, { pool: POOL, limit: LIMIT, ids: idsOf('20261127T0200Z') });
}, 90_000);

test('the jobSets function dying after some of its batches, invoked again: every job once', async () => {
  // SendMessageBatch answers for the first two batches (20 jobs), then the invocation dies
  const { awsClients } = await import('../../shared/adapters/awsClients');
  let batches = 0;
  const name = 'sluiceSetFault';
  awsClients().sqs.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === 'SendMessageBatchCommand' && ++batches > 2) throw new Error('fault injection: the function timed out');
      return next(args);
    },
    { step: 'initialize', name },
  );
  const at = '2026-11-28T02:00:00Z';
  try {
    await expect(stack.fireJobSet('nightly', at)).rejects.toThrow('fault injection');
  } finally {
    awsClients().sqs.middlewareStack.remove(name);
  }
  expect(batches).toBeGreaterThan(2);
  await stack.fireJobSet('nightly', at); // EventBridge Scheduler's retry
  await expectEveryJobRanOnce(stack, { pool: POOL, limit: LIMIT, ids: idsOf('20261128T0200Z') });
}, 90_000);
