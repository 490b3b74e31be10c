import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, DynamoDBDocumentClient, GetCommand, QueryCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { endedKeys } from '../../../shared/domain/endedIndex';
import { ENDED_INDEX, readJobsView, readRecentJobIds } from '../../../shared/inspect/viewSnapshot';
import { takeSnapshot } from '../../../shared/inspect/snapshot';
import { SQSClient } from '@aws-sdk/client-sqs';

const H = 3600_000;
/** 2026-01-02T03:00:00Z */
const NOW = Date.parse('2026-01-02T03:00:00Z');

type Item = Record<string, unknown> & { jobId: string; state: string; updatedAt: number };

const job = (id: string, state: string, updatedAt: number, more: Record<string, unknown> = {}): Item => ({
  jobId: id,
  pool: 'default',
  kind: 'glue',
  state,
  attempts: 1,
  updatedAt,
  ...more,
});

/**
 * A table as readJobsView reads it: the records (by key), one pool with its holders and waiters, and the `ended`
 * index, which may differ from the records: an index is eventually consistent, an entry may lag its record or be gone
 * from the table already (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html#GSI.Reads).
 * `pageSize`: entries a page of the index (AWS pages at 1 MB or Limit).
 */
function table(options: { records: Item[]; index: Item[]; holders?: string[]; waiters?: string[]; pageSize?: number }) {
  const doc = DynamoDBDocumentClient.from(
    new DynamoDBClient({ region: 'eu-west-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } }),
  );
  const mock = mockClient(doc);
  const entries = options.index.map((item) => ({
    ...item,
    ...endedKeys(item.state, Number(item.endedAt ?? item.deadLetteredAt ?? item.updatedAt), item.jobId),
  }));
  mock.on(QueryCommand).callsFake((input: Record<string, any>) => {
    if (input.IndexName === ENDED_INDEX) {
      const bucket = input.ExpressionAttributeValues[':bucket'];
      const from = input.ExpressionAttributeValues[':from'];
      const all = entries.filter((e) => e.endedBucket === bucket && e.endedSk >= from).sort((a, b) => b.endedSk.localeCompare(a.endedSk));
      const start = input.ExclusiveStartKey ? all.findIndex((e) => e.endedSk === input.ExclusiveStartKey.endedSk) + 1 : 0;
      const size = Math.min(input.Limit ?? Infinity, options.pageSize ?? Infinity);
      const page = all.slice(start, start + size);
      const more = start + size < all.length;
      return { Items: page, ...(more && { LastEvaluatedKey: { endedBucket: bucket, endedSk: page[page.length - 1]!.endedSk } }) };
    }
    if (input.IndexName === 'holders')
      return {
        Items:
          input.ExpressionAttributeValues[':pool'] === 'default'
            ? (options.holders ?? []).map((id) => ({ pk: `JOB#${id}`, kind: 'glue', leaseSince: NOW - H }))
            : [],
      };
    if (input.ExpressionAttributeValues[':pk'] === 'POOLS') return { Items: [{ pk: 'POOLS', sk: 'default' }] };
    if (input.Select === 'COUNT') return { Count: (options.waiters ?? []).length };
    // The pool's waiting list, the oldest first.
    return {
      Items: (options.waiters ?? []).map((id, i) => ({
        jobId: id,
        kind: 'glue',
        since: NOW - 1000 + i,
        sk: `WAIT#w${i}`,
        body: '{}',
        pool: 'default',
        keys: [],
        units: 1,
      })),
    };
  });
  mock.on(ScanCommand).rejects(new Error('a Scan of the table'));
  mock.on(GetCommand).resolves({ Item: { pk: 'POOL#default', sk: 'POOL', limit: 2, inUse: (options.holders ?? []).length } });
  mock.on(BatchGetCommand).callsFake((input: { RequestItems: Record<string, { Keys: Array<{ pk: string }> }> }) => ({
    Responses: {
      t: input.RequestItems.t!.Keys.map(({ pk }) => options.records.find((r) => r.jobId === pk.slice(4)))
        .filter((r) => r !== undefined)
        .map((r) => ({ ...r, spec: JSON.stringify({ kind: 'glue', id: r!.jobId, jobName: `job-${r!.jobId}` }) })),
    },
  }));
  return { doc, mock };
}

test('no Scan: the holders and waiters as their records say, the ended jobs of the day from the index, names and links', async () => {
  const records = [
    job('old-failed', 'failed', NOW - 30 * H, { startedAt: NOW - 31 * H, endedAt: NOW - 30 * H }),
    job('s-1', 'succeeded', NOW - 2 * H, { startedAt: NOW - 3 * H, endedAt: NOW - 2 * H, executionId: 'jr_2' }),
    job('s-2', 'succeeded', NOW - H, { startedAt: NOW - 2 * H, endedAt: NOW - H }),
    job('r-1', 'running', NOW - H, { startedAt: NOW - H }),
    job('w-1', 'waiting', NOW - 1000),
  ];
  const { doc, mock } = table({
    records,
    index: records.filter((r) => ['failed', 'succeeded'].includes(r.state)),
    holders: ['r-1'],
    waiters: ['w-1'],
  });
  const view = await readJobsView(doc, 't', { recent: 2, deadLettered: 10, now: NOW, region: 'eu-west-1' });
  expect(mock.commandCalls(ScanCommand)).toHaveLength(0);
  // The two latest of all, and the latest of each state besides. The failed one ended 30 h ago: before the window.
  expect(view.recent.map((j) => j.jobId)).toEqual(['w-1', 'r-1', 's-2', 's-1']);
  expect(view.recent.find((j) => j.jobId === 's-1')).toMatchObject({
    target: 'job-s-1',
    consoleUrl: 'https://eu-west-1.console.aws.amazon.com/gluestudio/home?region=eu-west-1#/job/job-s-1/run/jr_2',
  });
  expect(view.runTimes.map((t) => [t.state, t.startedAt]).sort()).toEqual([
    ['running', NOW - H],
    ['succeeded', NOW - 3 * H],
    ['succeeded', NOW - 2 * H],
  ]);
  // The ended buckets of the two days the window covers (16 shards each) and the dead ones of 15 days, newest first.
  const ended = mock.commandCalls(QueryCommand).filter((c) => c.args[0].input.IndexName === ENDED_INDEX);
  expect(ended.map((c) => c.args[0].input.ExpressionAttributeValues![':bucket'])).toEqual(
    expect.arrayContaining(['2026-01-02#0', '2026-01-01#15', '2026-01-02#dead#3', '2025-12-19#dead#15']),
  );
  expect(ended).toHaveLength(2 * 16 + 15 * 16);
  expect(ended.every((c) => c.args[0].input.ScanIndexForward === false && c.args[0].input.Limit! > 0)).toBe(true);
  expect(view.truncated).toBe(false);
});

test('the index lags: an entry behind its record, one whose record is gone; each job listed once, its latest change', async () => {
  // dead-1 was dead keeping a slot; the index still has it as first written (no deadLetteredAt yet), the record since
  // has it given back and dead-lettered. gone-1 was redriven: its record deleted, its index entry not yet.
  const records = [job('dead-1', 'dead', NOW - 10, { deadLetteredAt: NOW - 10, lastError: 'no capacity' })];
  const { doc } = table({
    records,
    index: [job('dead-1', 'dead', NOW - 5 * H), job('gone-1', 'dead', NOW - 2 * H, { deadLetteredAt: NOW - 2 * H })],
    holders: ['dead-1'],
  });
  const view = await readJobsView(doc, 't', { recent: 10, deadLettered: 10, now: NOW });
  expect(view.recent.filter((j) => j.jobId === 'dead-1')).toEqual([
    expect.objectContaining({ updatedAt: NOW - 10, lastError: 'no capacity' }),
  ]);
  // The entry whose record is gone is listed as the index has it, without its target's name (no spec to read).
  expect(view.deadLettered.map((j) => j.jobId)).toEqual(['dead-1', 'gone-1']);
  expect(view.deadLettered[1]!.target).toBeUndefined();
});

test('each bucket is read at most maxPages pages, and the view says when one had more', async () => {
  const many = Array.from({ length: 200 }, (_, i) => job(`s-${i}`, 'succeeded', NOW - H + i, { endedAt: NOW - H + i }));
  const { doc, mock } = table({ records: many, index: many, pageSize: 2 });
  const view = await readJobsView(doc, 't', { recent: 500, deadLettered: 10, now: NOW, maxPages: 3 });
  expect(view.truncated).toBe(true);
  const byBucket = new Map<string, number>();
  for (const call of mock.commandCalls(QueryCommand).filter((c) => c.args[0].input.IndexName === ENDED_INDEX)) {
    const bucket = call.args[0].input.ExpressionAttributeValues![':bucket'] as string;
    byBucket.set(bucket, (byBucket.get(bucket) ?? 0) + 1);
  }
  expect(Math.max(...byBucket.values())).toBe(3);
  // At most 3 pages of 2 of each of the 16 shards of the day (the other day's buckets hold none).
  expect(view.recent.length).toBeLessThanOrEqual(16 * 3 * 2);
  expect(view.recent.length).toBeGreaterThan(16);
});

test("sluice top's latest jobs: today's buckets, newest first, at most `recent` each; yesterday's only when today has fewer", async () => {
  const records = [
    job('r-1', 'running', NOW - H, { startedAt: NOW - H }),
    ...Array.from({ length: 6 }, (_, i) => job(`t-${i}`, 'succeeded', NOW - 2 * H + i, { endedAt: NOW - 2 * H + i })),
    job('y-1', 'failed', NOW - 20 * H, { endedAt: NOW - 20 * H }),
  ];
  const { doc, mock } = table({ records, index: records.filter((r) => r.state !== 'running'), holders: ['r-1'] });
  const bucketsRead = () =>
    mock
      .commandCalls(QueryCommand)
      .filter((c) => c.args[0].input.IndexName === ENDED_INDEX)
      .map((c) => c.args[0].input);
  expect(await readRecentJobIds(doc, 't', { recent: 3, now: NOW })).toEqual(['r-1', 't-5', 't-4']);
  expect(bucketsRead()).toHaveLength(32);
  expect(
    bucketsRead().every((input) => String(input.ExpressionAttributeValues![':bucket']).startsWith('2026-01-02#') && input.Limit === 3),
  ).toBe(true);
  mock.resetHistory();
  expect(await readRecentJobIds(doc, 't', { recent: 10, now: NOW })).toEqual(['r-1', 't-5', 't-4', 't-3', 't-2', 't-1', 't-0', 'y-1']);
  expect(bucketsRead()).toHaveLength(64);
  expect(mock.commandCalls(ScanCommand)).toHaveLength(0);
});

test("sluice top's snapshot reads the pools once: the pool list, each pool's holders and its waiting list, one query each", async () => {
  const records = [
    job('w-1', 'waiting', NOW - 1000),
    job('w-2', 'waiting', NOW - 900),
    job('s-1', 'succeeded', NOW - H, { endedAt: NOW - H }),
  ];
  const { doc, mock } = table({ records, index: records.filter((r) => r.state === 'succeeded'), waiters: ['w-1', 'w-2'] });
  const queries = (match: (input: Record<string, any>) => boolean) =>
    mock
      .commandCalls(QueryCommand)
      .map((c) => c.args[0].input as Record<string, any>)
      .filter(match);
  // Act: a snapshot that shows 1 waiter per pool and the 5 latest jobs
  const snapshot = await takeSnapshot({ doc, sqs: new SQSClient({ region: 'eu-west-1' }), table: 't' }, { waiters: 1, recent: 5 });
  // Assess: one read of each; the pool shows its first waiter, the latest jobs hold both waiters
  expect(queries((input) => input.ExpressionAttributeValues?.[':pk'] === 'POOLS')).toHaveLength(1);
  expect(queries((input) => input.IndexName === 'holders')).toHaveLength(1);
  expect(queries((input) => input.IndexName === undefined && input.Select === 'COUNT')).toHaveLength(1);
  expect(snapshot.pools.map((pool) => pool.next.map((waiter) => waiter.jobId))).toEqual([['w-1']]);
  expect(snapshot.recentJobs.map((listed) => listed.jobId).sort()).toEqual(['w-1', 'w-2']);
});
