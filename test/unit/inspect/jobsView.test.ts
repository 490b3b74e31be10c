import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { readJobsView } from '../../../shared/inspect/viewSnapshot';

const H = 3600_000;
const NOW = 1_000 * H;

/** A table of `pages` Scan pages; each job's spec (read by key after) names its Glue job. */
function table(pages: Array<Array<Record<string, unknown>>>) {
  const doc = DynamoDBDocumentClient.from(
    new DynamoDBClient({ region: 'eu-west-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } }),
  );
  const mock = mockClient(doc);
  pages.forEach((items, i) =>
    mock
      .on(ScanCommand, i === 0 ? { ExclusiveStartKey: undefined } : { ExclusiveStartKey: { page: i } })
      .resolves({ Items: items, ...(i < pages.length - 1 && { LastEvaluatedKey: { page: i + 1 } }) }),
  );
  mock.on(BatchGetCommand).callsFake((input: { RequestItems: Record<string, { Keys: Array<{ pk: string }> }> }) => ({
    Responses: {
      t: input.RequestItems.t!.Keys.map(({ pk }) => ({
        jobId: pk.slice(4),
        spec: JSON.stringify({ kind: 'glue', id: pk.slice(4), jobName: `job-${pk.slice(4)}` }),
      })),
    },
  }));
  return { doc, mock };
}

const job = (id: string, state: string, updatedAt: number, more: Record<string, unknown> = {}) => ({
  jobId: id,
  pool: 'default',
  kind: 'glue',
  state,
  attempts: 1,
  updatedAt,
  ...more,
});

test('one pass: the latest of all and of each state, the day’s run times, names and console links', async () => {
  const { doc } = table([
    [
      job('old-failed', 'failed', NOW - 30 * H, { startedAt: NOW - 31 * H, endedAt: NOW - 30 * H, executionId: 'jr_1' }),
      job('s-1', 'succeeded', NOW - 2 * H, { startedAt: NOW - 3 * H, endedAt: NOW - 2 * H, executionId: 'jr_2' }),
    ],
    [job('s-2', 'succeeded', NOW - H, { startedAt: NOW - 2 * H, endedAt: NOW - H }), job('q-1', 'queued', NOW)],
  ]);
  const view = await readJobsView(doc, 't', { recent: 2, deadLettered: 10, now: NOW, region: 'eu-west-1' });
  // The two latest of all, and the latest of each state besides: the failed one is there for a view filtered by state.
  expect(view.recent.map((j) => j.jobId)).toEqual(['q-1', 's-2', 's-1', 'old-failed']);
  expect(view.recent.find((j) => j.jobId === 's-1')).toMatchObject({
    target: 'job-s-1',
    consoleUrl: 'https://eu-west-1.console.aws.amazon.com/gluestudio/home?region=eu-west-1#/job/job-s-1/run/jr_2',
  });
  // Only what ran or ended in the last day makes the history.
  expect(view.runTimes).toEqual([
    { pool: 'default', state: 'succeeded', updatedAt: NOW - 2 * H, startedAt: NOW - 3 * H, endedAt: NOW - 2 * H },
    { pool: 'default', state: 'succeeded', updatedAt: NOW - H, startedAt: NOW - 2 * H, endedAt: NOW - H },
  ]);
  expect(view.truncated).toBe(false);
});

test('the Scan stops at its page limit and says so', async () => {
  const { doc, mock } = table([[job('a', 'succeeded', NOW)], [job('b', 'succeeded', NOW)], [job('c', 'succeeded', NOW)]]);
  const view = await readJobsView(doc, 't', { recent: 10, deadLettered: 10, now: NOW, maxPages: 2 });
  expect(mock.commandCalls(ScanCommand)).toHaveLength(2);
  expect(view.truncated).toBe(true);
  expect(view.recent.map((j) => j.jobId).sort()).toEqual(['a', 'b']);
  // No region: no console links.
  expect(view.recent.every((j) => j.consoleUrl === undefined)).toBe(true);
});
