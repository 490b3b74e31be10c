import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { readSetRuns } from '../../../shared/inspect/setRuns';

const client = { region: 'eu-west-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } };

test("a set's runs with their counts: a completed run's from its summary, an open run's from its jobs' records", async () => {
  const doc = DynamoDBDocumentClient.from(new DynamoDBClient(client));
  const mock = mockClient(doc);
  const open = { set: 'nightly', run: 'r2', total: 3, keys: ['a', 'b', 'c'], ended: 2, startedAt: 2_000 };
  const done = {
    set: 'nightly',
    run: 'r1',
    total: 2,
    keys: ['a', 'b'],
    ended: 2,
    startedAt: 1_000,
    completedAt: 1_500,
    summary: { total: 2, succeeded: 1, failed: 1, open: 0, failedIds: ['nightly.r1.b'] },
  };
  mock.on(QueryCommand, { ExpressionAttributeValues: { ':pk': 'SETRUNS' } }).resolves({ Items: [{ set: 'nightly', run: 'r2' }] });
  mock.on(GetCommand, { Key: { pk: 'SET#nightly', sk: 'RUN#r2' } }).resolves({ Item: open });
  mock.on(QueryCommand, { ExpressionAttributeValues: { ':pk': 'SET#nightly' } }).resolves({ Items: [done, open] });
  const job = (id: string, state: string) => ({
    pk: `JOB#${id}`,
    sk: 'JOB',
    jobId: id,
    pool: 'default',
    kind: 'glue',
    state,
    spec: JSON.stringify({ kind: 'glue', id, jobName: 'x' }),
    version: 3,
    attempts: 1,
    firstSeenAt: 1,
    updatedAt: 1,
  });
  mock.on(GetCommand, { Key: { pk: 'JOB#nightly.r2.a', sk: 'JOB' } }).resolves({ Item: job('nightly.r2.a', 'succeeded') });
  mock.on(GetCommand, { Key: { pk: 'JOB#nightly.r2.b', sk: 'JOB' } }).resolves({ Item: job('nightly.r2.b', 'dead') });
  mock.on(GetCommand, { Key: { pk: 'JOB#nightly.r2.c', sk: 'JOB' } }).resolves({});

  const runs = await readSetRuns({ doc, sqs: new SQSClient(client), table: 't', jobSetsFile: '/nonexistent/sets.yml' }, 5);
  expect(runs).toEqual([
    { set: 'nightly', run: 'r2', startedAt: 2_000, total: 3, ended: 2, succeeded: 1, failed: 1, open: 1, failedIds: ['nightly.r2.b'] },
    {
      set: 'nightly',
      run: 'r1',
      startedAt: 1_000,
      completedAt: 1_500,
      total: 2,
      ended: 2,
      succeeded: 1,
      failed: 1,
      open: 0,
      failedIds: ['nightly.r1.b'],
    },
  ]);
  // The completed run's jobs are not read: its summary has their counts.
  const reads = mock.commandCalls(GetCommand).map((call) => String(call.args[0].input.Key!.pk));
  expect(reads.filter((pk) => pk.startsWith('JOB#nightly.r1.'))).toEqual([]);
});
