import { randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { CreateQueueCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoJobLedger } from '../../../shared/adapters/dynamodb/jobLedger';
import { DynamoLeaseStore } from '../../../shared/adapters/dynamodb/leaseStore';
import { SqsJobQueue } from '../../../shared/adapters/sqs/jobQueue';
import { type CliIo, main } from '../../../shared/cli/main';
import { spawnEmulators, type SpawnedEmulators } from '../../support/spawnEmulators';
import { createSluiceTable } from '../../support/table';
import { receiver, unit } from '../../support/demands';
import type { JobSpec } from '../../../shared/kinds/registry';

/**
 * `sluice dlq redrive` decides from the ledger whether a job's id may be used again: only a dead job that holds no slot
 * and never asked for a start is forgotten and re-sent; the others stay in the DLQ with the reason.
 */

const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
let emulators: SpawnedEmulators;
let sqs: SQSClient;
let dynamodb: DynamoDBClient;
let doc: DynamoDBDocumentClient;
const saved = { ...process.env };

beforeAll(async () => {
  emulators = await spawnEmulators();
  Object.assign(process.env, {
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    AWS_ENDPOINT_URL_SQS: emulators.sqsEndpoint,
    AWS_ENDPOINT_URL_DYNAMODB: emulators.dynamodbEndpoint,
    SLUICE_LOCAL_ENV_FILE: '/nonexistent/sluice-local.env',
  });
  sqs = new SQSClient({ endpoint: emulators.sqsEndpoint, region: 'us-east-1', credentials, useQueueUrlAsEndpoint: false });
  dynamodb = new DynamoDBClient({ endpoint: emulators.dynamodbEndpoint, region: 'us-east-1', credentials });
  doc = DynamoDBDocumentClient.from(dynamodb);
}, 60_000);

afterAll(async () => {
  process.env = saved;
  sqs?.destroy();
  dynamodb?.destroy();
  await emulators?.stop();
});

async function run(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = {
    stdout: (t) => void out.push(t),
    stderr: (t) => void err.push(t),
    env: process.env,
    readInput: () => Promise.resolve(''),
  };
  const code = await main(argv, io);
  return { code, out: out.join('\n'), err: err.join('\n') };
}

const queue = async () => (await sqs.send(new CreateQueueCommand({ QueueName: `redrive-${randomUUID().slice(0, 8)}` }))).QueueUrl!;

test('dead and never started: forgotten and re-sent as it was; started or still holding a slot: kept with the reason', async () => {
  const table = await createSluiceTable(dynamodb, 'sluice-redrive');
  const [queueUrl, dlqUrl] = [await queue(), await queue()];
  const leases = new DynamoLeaseStore(doc, table);
  const ledger = new DynamoJobLedger(doc, table);
  const dlq = new SqsJobQueue(sqs, queueUrl, dlqUrl);
  await leases.createPool('etl', 5);
  const spec = (id: string): JobSpec => ({ kind: 'glue', pool: 'etl', id, jobName: 'sluice-nightly' });

  // never-ran: dead at once (an unknown pool, say): no start was asked for.
  const { record: neverRan } = await ledger.register(spec('never-ran'), 1);
  expect(await ledger.move({ jobId: 'never-ran', version: neverRan.version, to: 'dead', patch: { lastError: 'unknown pool' } }, 2)).toBe(
    true,
  );
  // started: took a slot and asked for a start, then was given up and its slot freed.
  const { record: started } = await ledger.register(spec('started'), 1);
  expect((await leases.take(unit('etl'), { jobId: 'started', version: started.version, to: 'starting', patch: { startRequested: true } }, 2)).outcome).toBe(
    'taken',
  );
  expect(await leases.free(unit('etl'), { jobId: 'started', version: started.version + 1, to: 'dead' }, 3)).toBe(true);
  // holding: dead with the slot kept for a run of unknown outcome.
  const { record: holding } = await ledger.register(spec('holding'), 1);
  expect((await leases.take(unit('etl'), { jobId: 'holding', version: holding.version, to: 'starting' }, 2)).outcome).toBe('taken');
  expect(await ledger.move({ jobId: 'holding', version: holding.version + 1, to: 'dead', patch: { leaseUntil: 9e12 } }, 3)).toBe(true);
  for (const id of ['never-ran', 'started', 'holding'])
    await dlq.deadLetter(JSON.stringify(spec(id)), `reason of ${id}`, { jobId: id, pool: 'etl' });

  const listed = JSON.parse((await run('dlq', 'list', '--json', '--dlq-url', dlqUrl)).out) as Array<{ jobId: string; reason: string }>;
  expect(listed.map((l) => [l.jobId, l.reason])).toEqual([
    ['never-ran', 'reason of never-ran'],
    ['started', 'reason of started'],
    ['holding', 'reason of holding'],
  ]);

  const result = await run('dlq', 'redrive', '--all', '--table', table, '--queue-url', queueUrl, '--dlq-url', dlqUrl);
  expect(result.code).toBe(1);
  expect(result.out.split('\n')).toEqual([
    're-sent 1 of 3 dead-lettered jobs',
    '  never-ran: sent to the job queue',
    '  started: kept in the DLQ: a run may exist under job id started (a start was asked for): send the job again with a new id',
    '  holding: kept in the DLQ: job holding still holds a slot for a run it may have started: redrive it after that slot is given back',
  ]);
  // The original body went back to the job queue, the dead record is gone (the acquirer will register it anew),
  // and the two kept letters are visible in the DLQ at once.
  const { Messages } = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }));
  expect(Messages?.map((m) => m.Body)).toEqual([JSON.stringify(spec('never-ran'))]);
  expect(await ledger.get('never-ran')).toBeUndefined();
  expect((await ledger.get('started'))?.state).toBe('dead');
  const left = JSON.parse((await run('dlq', 'list', '--json', '--dlq-url', dlqUrl)).out) as Array<{ jobId: string }>;
  expect(left.map((l) => l.jobId)).toEqual(['started', 'holding']);
  expect(await run('dlq', 'redrive', '--id', 'nope', '--table', table, '--queue-url', queueUrl, '--dlq-url', dlqUrl)).toEqual({
    code: 1,
    out: 'nothing to redrive: no such message in the dead-letter queue',
    err: 'sluice: not in the dead-letter queue: nope',
  });
}, 60_000);
