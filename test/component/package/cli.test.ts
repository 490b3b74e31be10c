import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { CreateTableCommand, DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { CreateQueueCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoJobLedger } from '../../../shared/adapters/dynamodb/jobLedger';
import { DynamoLeaseStore } from '../../../shared/adapters/dynamodb/leaseStore';
import { DynamoScheduleStore } from '../../../shared/adapters/dynamodb/scheduleStore';
import { registeredRecord } from '../../../shared/ports/jobLedger';
import { type CliIo, main } from '../../../shared/cli/main';
import { stageResourceNames } from '../../../shared/cli/targets';
import { waitKey } from '../../../shared/domain/waiting';
import { resourcesOfType, tableInput } from '../../../local/infra/provision';
import { loadServiceDefinition } from '../../../local/infra/serviceDefinition';
import { spawnEmulators, type SpawnedEmulators } from '../../support/spawnEmulators';
import { createSluiceTable } from '../../support/table';
import { receiver, unit } from '../../support/demands';
import type { JobSpec } from '../../../shared/kinds/registry';

/** `sluice` against the SQS and DynamoDB emulators, configured only through the SDK's standard environment. */

const ROOT = path.resolve(__dirname, '../../..');
const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
let emulators: SpawnedEmulators;
let sqs: SQSClient;
let dynamodb: DynamoDBClient;
let tmp: string;
const saved = { ...process.env };

beforeAll(async () => {
  emulators = await spawnEmulators();
  // What a user sets to point the CLI at emulators; on AWS these are simply absent.
  Object.assign(process.env, {
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    AWS_ENDPOINT_URL_SQS: emulators.sqsEndpoint,
    AWS_ENDPOINT_URL_DYNAMODB: emulators.dynamodbEndpoint,
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    // A resident local stack a developer may run is never picked up here.
    SLUICE_LOCAL_ENV_FILE: path.join(os.tmpdir(), 'sluice-cli-test-no-local-stack.env'),
  });
  sqs = new SQSClient({ endpoint: emulators.sqsEndpoint, region: 'us-east-1', credentials, useQueueUrlAsEndpoint: false });
  dynamodb = new DynamoDBClient({ endpoint: emulators.dynamodbEndpoint, region: 'us-east-1', credentials });
  tmp = await mkdtemp(path.join(os.tmpdir(), 'sluice-cli-'));
}, 60_000);

afterAll(async () => {
  process.env = saved;
  sqs?.destroy();
  dynamodb?.destroy();
  await rm(tmp, { recursive: true, force: true });
  await emulators?.stop();
});

async function run(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = {
    stdout: (t) => void out.push(t),
    stderr: (t) => void err.push(t),
    env: process.env,
    readInput: (file) => import('node:fs/promises').then((fs) => fs.readFile(file, 'utf8')),
  };
  const code = await main(argv, io);
  return { code, out: out.join('\n'), err: err.join('\n') };
}

async function queue(name = `cli-${randomUUID().slice(0, 8)}`): Promise<string> {
  return (await sqs.send(new CreateQueueCommand({ QueueName: name }))).QueueUrl!;
}

/** Every message now in the queue (long-polled, so no sleeping). */
async function drain(queueUrl: string): Promise<string[]> {
  const bodies: string[] = [];
  for (;;) {
    const { Messages } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: bodies.length ? 0 : 1,
        VisibilityTimeout: 60,
      }),
    );
    if (!Messages?.length) return bodies;
    bodies.push(...Messages.map((m) => m.Body!));
  }
}

async function file(name: string, text: string): Promise<string> {
  const at = path.join(tmp, name);
  await writeFile(at, text);
  return at;
}

describe('sluice pool', () => {
  test('set-limit creates and sets a pool; list shows it', async () => {
    const table = await createSluiceTable(dynamodb, 'sluice-cli');
    const queueUrl = await queue();
    expect(await run('pool', 'list', '--table', table)).toEqual({ code: 0, out: expect.stringMatching(/^no pools yet/), err: '' });

    // A pool that does not exist is made only when asked (a typo never makes one).
    expect(await run('pool', 'set-limit', 'etl', '2', '--table', table, '--queue-url', queueUrl)).toEqual({
      code: 2,
      out: '',
      err: `sluice: no pool 'etl' in ${table} (no pools yet): add --create to make it`,
    });
    expect(await run('pool', 'set-limit', 'etl', '2', '--create', '--table', table, '--queue-url', queueUrl)).toEqual({
      code: 0,
      out: 'pool etl: limit 2, 0 waiting jobs let in',
      err: '',
    });
    expect((await run('pool', 'set-limit', 'elt', '2', '--table', table, '--queue-url', queueUrl)).err).toBe(
      `sluice: no pool 'elt' in ${table} (pools: etl): add --create to make it`,
    );
    const listed = await run('pool', 'list', '--table', table, '--json');
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.out)).toEqual([{ name: 'etl', limit: 2, inUse: 0, waiting: 0, holders: [], held: [] }]);
    expect((await run('pool', 'list', '--table', table)).out.split('\n')).toEqual([
      'POOL  LIMIT  IN USE  FREE  WAITING',
      'etl       2       0     2        0',
    ]);
  });

  test('raising a limit lets the oldest waiting jobs in at once: their specs go to the job queue', async () => {
    const table = await createSluiceTable(dynamodb, 'sluice-cli');
    const queueUrl = await queue();
    expect((await run('pool', 'set-limit', 'batch', '0', '--create', '--table', table, '--queue-url', queueUrl)).out).toMatch(
      /limit 0, paused/,
    );
    const leases = new DynamoLeaseStore(DynamoDBDocumentClient.from(dynamodb), table);
    const ledger = new DynamoJobLedger(DynamoDBDocumentClient.from(dynamodb), table);
    for (const [i, id] of ['first', 'second', 'third'].entries()) {
      const spec = { kind: 'glue', pool: 'batch', id, jobName: 'sluice-nightly' } as const;
      // Parked as the acquirer parks a job: the waiter item, then the job's record moved to waiting.
      await leases.addWaiter({
        pool: 'batch',
        jobId: id,
        kind: 'glue',
        waitKey: waitKey(1_000 + i, id),
        body: JSON.stringify(spec),
        since: 1_000 + i,
      });
      const { record } = await ledger.register(spec, 1_000 + i);
      expect(await ledger.move({ jobId: id, version: record.version, to: 'waiting' }, 1_000 + i)).toBe(true);
    }
    expect((await run('pool', 'list', '--table', table)).out).toContain('batch      0       0     0        3');

    expect(await run('pool', 'set-limit', 'batch', '2', '--table', table, '--queue-url', queueUrl)).toEqual({
      code: 0,
      out: 'pool batch: limit 2, 2 waiting jobs let in',
      err: '',
    });
    expect((await drain(queueUrl)).map((b) => (JSON.parse(b) as { id: string }).id).sort()).toEqual(['first', 'second']);
    const [pool] = JSON.parse((await run('pool', 'list', '--table', table, '--json')).out) as Array<{
      inUse: number;
      waiting: number;
      holders: string[];
    }>;
    expect(pool).toMatchObject({ inUse: 2, waiting: 1 });
    expect(pool!.holders.sort()).toEqual(['first', 'second']);
  });

  // 300 holders are 3 pages of the holders index (the bench's capacity scenario fills a pool of 1,000 on the whole stack).
  test('a pool of 1,000 with 300 slots held: `pool list --json` names every holder (pages of the holders index)', async () => {
    const table = await createSluiceTable(dynamodb, 'sluice-cli');
    const doc = DynamoDBDocumentClient.from(dynamodb);
    const leases = new DynamoLeaseStore(doc, table);
    const ledger = new DynamoJobLedger(doc, table);
    await leases.createPool('big', 1000);
    const ids = Array.from({ length: 300 }, (_, i) => `big-${String(i).padStart(4, '0')}`);
    for (let i = 0; i < ids.length; i += 25)
      await Promise.all(
        ids.slice(i, i + 25).map(async (id) => {
          const { record } = await ledger.register({ kind: 'appflow', pool: 'big', id, flowName: 'sluice-f' }, 1);
          expect((await leases.take(unit('big'), { jobId: id, version: record.version, to: 'starting' }, 1)).outcome).toBe('taken');
        }),
      );
    const listed = await run('pool', 'list', '--table', table, '--json');
    expect(listed.code).toBe(0);
    const [pool] = JSON.parse(listed.out) as Array<{ name: string; limit: number; inUse: number; holders: string[] }>;
    expect(pool).toMatchObject({ name: 'big', limit: 1000, inUse: 300 });
    expect([...pool!.holders].sort()).toEqual(ids);
  }, 60_000);

  test('a table that does not exist: exit 1 with the SDK error and a hint', async () => {
    const result = await run('pool', 'list', '--table', 'sluice-missing');
    expect(result.code).toBe(1);
    expect(result.err).toMatch(/^sluice: ResourceNotFoundException: .*\(is the table name or stage right, and the region\?\)$/);
  });
});

describe('sluice enqueue', () => {
  test('sends 12 valid specs (more than one SendMessageBatch of 10), gives ids to specs without one, reports rejects, exits 1', async () => {
    const queueUrl = await queue();
    const specs = Array.from({ length: 12 }, (_, i) =>
      JSON.stringify(
        i === 0
          ? { kind: 'appflow', flowName: 'sluice-accounts' }
          : { kind: 'glue', id: `job-${i}`, jobName: 'sluice-nightly', arguments: { '--day': '2026-11-22' } },
      ),
    );
    specs.splice(3, 0, JSON.stringify({ kind: 'appflow', id: 'bad', flowName: 'has spaces' }));
    const jobs = await file('jobs.jsonl', `${specs.join('\n')}\n`);

    const result = await run('enqueue', jobs, '--queue-url', queueUrl);
    expect(result.code).toBe(1);
    const sentIds = result.out
      .split('\n')
      .slice(1)
      .map((l) => l.trim());
    expect(result.out.split('\n')[0]).toBe(`sent 12 jobs to ${queueUrl}`);
    expect(sentIds).toHaveLength(12);
    expect(sentIds.slice(1)).toEqual(Array.from({ length: 11 }, (_, i) => `job-${i + 1}`));
    expect(result.err).toBe('rejected 1 spec (not sent):\n  spec 4: flowName: flowName is not a valid AppFlow flow name');

    const received = (await drain(queueUrl)).map((b) => JSON.parse(b) as { id: string; pool: string });
    expect(received.map((s) => s.id).sort()).toEqual([...sentIds].sort());
    // What the acquirer gets is the validated spec, defaults filled in.
    expect(received.every((s) => s.pool === 'default')).toBe(true);
  });

  test('a JSON array, all valid: exit 0, --json report', async () => {
    const queueUrl = await queue();
    const jobs = await file(
      'jobs.json',
      JSON.stringify([
        { kind: 'glue', id: 'a', jobName: 'sluice-x' },
        { kind: 'glue', id: 'b', jobName: 'sluice-x', pool: 'etl' },
      ]),
    );
    const result = await run('enqueue', jobs, '--queue-url', queueUrl, '--json');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.out)).toEqual({ queueUrl, sent: ['a', 'b'], rejected: [] });
    expect(await drain(queueUrl)).toHaveLength(2);
  });
});

describe('sluice enqueue --at and sluice cancel', () => {
  test('--at sets notBefore on every job; cancel makes a scheduled job cancelled and says what it did', async () => {
    const queueUrl = await queue();
    const at = '2099-01-01T02:00:00+01:00';
    const jobs = await file('at.jsonl', `${JSON.stringify({ kind: 'glue', id: 'later-1', jobName: 'sluice-x' })}\n`);
    expect((await run('enqueue', jobs, '--queue-url', queueUrl, '--at', at)).code).toBe(0);
    const [body] = await drain(queueUrl);
    expect(JSON.parse(body!)).toMatchObject({ id: 'later-1', notBefore: at });
    // As the acquirer records it (protocol step schedule), then cancelled from the command line.
    const table = await createSluiceTable(dynamodb, 'sluice-cli');
    // dynalite answers CreateTable before the table (and its indexes) can be written: wait until ACTIVE, with a deadline.
    const deadline = Date.now() + 10_000;
    while ((await dynamodb.send(new DescribeTableCommand({ TableName: table }))).Table?.TableStatus !== 'ACTIVE') {
      if (Date.now() > deadline) throw new Error(`table ${table} not ACTIVE in 10 s`);
      await new Promise((resolve) => setImmediate(resolve));
    }
    const doc = DynamoDBDocumentClient.from(dynamodb);
    const spec = JSON.parse(body!) as JobSpec;
    await new DynamoScheduleStore(doc, table).schedule({ ...registeredRecord(spec, Date.now()), state: 'scheduled' });
    const cancelled = await run('cancel', 'later-1', '--table', table);
    expect(cancelled).toMatchObject({ code: 0, out: 'cancelled: job later-1 (was scheduled) will never start' });
    expect((await new DynamoJobLedger(doc, table).get('later-1'))!.state).toBe('cancelled');
    const again = await run('cancel', 'later-1', '--table', table, '--json');
    expect(again.code).toBe(1);
    expect(JSON.parse(again.out)).toEqual({ jobId: 'later-1', outcome: 'finished', state: 'cancelled' });
    expect((await run('cancel', 'nobody', '--table', table)).out).toMatch(/no job 'nobody'/);
  });
});

describe('--stage', () => {
  test('finds the table by name and the queue by GetQueueUrl, as a deployed stage names them', async () => {
    const stage = `ct${process.pid}${randomUUID().slice(0, 4)}`;
    const names = stageResourceNames(stage);
    const [[, tableResource]] = resourcesOfType(await loadServiceDefinition('local'), 'AWS::DynamoDB::Table') as [[string, never]];
    await dynamodb.send(new CreateTableCommand(tableInput(tableResource, names.table)));
    const queueUrl = await queue(names.queue);
    await queue(names.deadLetterQueue);

    expect(await run('pool', 'set-limit', 'etl', '3', '--create', '--stage', stage)).toEqual({
      code: 0,
      out: 'pool etl: limit 3, 0 waiting jobs let in',
      err: '',
    });
    expect(JSON.parse((await run('pool', 'list', '--json', '--table', names.table)).out)).toEqual([
      expect.objectContaining({ name: 'etl', limit: 3 }),
    ]);
    const jobs = await file('one.json', JSON.stringify({ kind: 'glue', id: 'staged', jobName: 'sluice-x' }));
    expect((await run('enqueue', jobs, '--stage', stage)).code).toBe(0);
    expect((await drain(queueUrl)).map((b) => (JSON.parse(b) as { id: string }).id)).toEqual(['staged']);
  });

  test('a stage with no queue: exit 1 naming the SQS error', async () => {
    const jobs = await file('one-more.json', JSON.stringify({ kind: 'glue', id: 'x', jobName: 'sluice-x' }));
    const result = await run('enqueue', jobs, '--stage', 'nosuchstage');
    expect(result.code).toBe(1);
    expect(result.err).toMatch(/^sluice: .*(QueueDoesNotExist|NonExistentQueue|does not exist)/i);
  });
});

test('bin/sluice.cjs runs the same command from a shell, configured only by the environment', async () => {
  const table = await createSluiceTable(dynamodb, 'sluice-cli');
  const queueUrl = await queue();
  const env = { ...process.env, SLUICE_TABLE: table, SLUICE_QUEUE_URL: queueUrl };
  const exec = promisify(execFile);
  const set = await exec(process.execPath, [path.join(ROOT, 'bin/sluice.cjs'), 'pool', 'set-limit', 'shell', '5', '--create'], {
    cwd: tmp,
    env,
  });
  expect(set.stdout).toBe('pool shell: limit 5, 0 waiting jobs let in\n');
  const list = await exec(process.execPath, [path.join(ROOT, 'bin/sluice.cjs'), 'pool', 'list', '--json'], { cwd: tmp, env });
  expect(JSON.parse(list.stdout)).toEqual([{ name: 'shell', limit: 5, inUse: 0, waiting: 0, holders: [], held: [] }]);
  await expect(
    exec(process.execPath, [path.join(ROOT, 'bin/sluice.cjs'), 'pool', 'set-limit', 'shell'], { cwd: tmp, env }),
  ).rejects.toMatchObject({ code: 2 });
}, 30_000);
