import { type DynamoDBDocumentClient, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoJobLedger } from '../../../shared/adapters/dynamodb/jobLedger';
import { jobKey } from '../../../shared/adapters/dynamodb/keys';
import { DynamoLeaseStore } from '../../../shared/adapters/dynamodb/leaseStore';
import { DAY_MS, endedKeys, endedShardOf } from '../../../shared/domain/endedIndex';
import { JobState } from '../../../shared/domain/jobState';
import { ENDED_INDEX, readJobsView, SUMMARY_FIELDS } from '../../../shared/inspect/viewSnapshot';
import type { JobRecord, Move, RecordPatch } from '../../../shared/ports/jobLedger';
import { TakeOutcome } from '../../../shared/ports/leaseStore';
import { type Waiter, waitKey } from '../../../shared/domain/waiting';
import type { JobSpec } from '../../../shared/kinds/registry';
import { unit } from '../../support/demands';
import type { DynamoFixtures } from './dynamoFixtures';

const H = 3600_000;
/** 2026-01-02T03:00:00Z: the last day's window covers the end of 2026-01-01 and the start of 2026-01-02. */
const NOW = 1_767_225_600_000 + DAY_MS + 3 * H;
const glue = (id: string, pool = 'etl'): JobSpec => ({ id, pool, kind: 'glue', jobName: `job-${id}` });
const from = (record: JobRecord, to: JobState, patch?: RecordPatch): Move => ({ jobId: record.jobId, version: record.version, to, patch });

/** A client that counts the commands sent through it, by name. */
function counting(doc: DynamoDBDocumentClient): { doc: DynamoDBDocumentClient; sent: string[] } {
  const sent: string[] = [];
  const proxy = new Proxy(doc, {
    get(target, prop, receiver) {
      if (prop !== 'send') return Reflect.get(target, prop, receiver);
      return (command: { constructor: { name: string } }) => {
        sent.push(command.constructor.name);
        return target.send(command as never);
      };
    },
  });
  return { doc: proxy, sent };
}

/**
 * The `ended` index as the adapters write it and readJobsView reads it, on a table built from serverless.yml. Both local
 * engines update an index at once; AWS does not (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html#GSI.Reads):
 * the unit tests of readJobsView (test/unit/inspect/jobsView.test.ts) give it an index that lags.
 */
export function describeEndedIndexContract(name: string, fixtures: () => DynamoFixtures): void {
  describe(`the ended index: ${name}`, () => {
    let table: { name: string; drop(): Promise<void> };
    let ledger: DynamoJobLedger;
    let leases: DynamoLeaseStore;
    beforeEach(async () => {
      table = await fixtures().table();
      ledger = new DynamoJobLedger(fixtures().doc, table.name);
      leases = new DynamoLeaseStore(fixtures().doc, table.name);
    });
    afterEach(async () => table?.drop());

    const item = async (jobId: string) =>
      (await fixtures().doc.send(new GetCommand({ TableName: table.name, Key: jobKey(jobId), ConsistentRead: true }))).Item!;
    const indexed = async (bucket: string) =>
      (
        await fixtures().doc.send(
          new QueryCommand({
            TableName: table.name,
            IndexName: ENDED_INDEX,
            KeyConditionExpression: 'endedBucket = :b',
            ExpressionAttributeValues: { ':b': bucket },
          }),
        )
      ).Items ?? [];

    test('a move to a terminal state sets the keys (its time, a shard of its id); a live job has none', async () => {
      const queued = (await ledger.register(glue('j1'), NOW - 2 * H)).record;
      expect(await item('j1')).not.toHaveProperty('endedBucket');
      await leases.createPool('etl', 2);
      expect((await leases.take(unit('etl'), from(queued, JobState.Starting), NOW - 2 * H + 1)).outcome).toBe(TakeOutcome.Taken);
      const starting = (await ledger.get('j1'))!;
      expect(await ledger.move(from(starting, JobState.Running, { startedAt: NOW - H }), NOW - H)).toBe(true);
      expect(await item('j1')).not.toHaveProperty('endedSk');
      // The releaser's move: the slot freed and the job succeeded, one write.
      const running = (await ledger.get('j1'))!;
      expect(await leases.free(unit('etl'), from(running, JobState.Succeeded, { endedAt: NOW - 10 }), NOW - 10)).toBe(true);
      const keys = endedKeys(JobState.Succeeded, NOW - 10, 'j1');
      expect(keys.endedBucket).toBe(`2026-01-02#${endedShardOf('j1')}`);
      expect(await item('j1')).toMatchObject(keys);
      // On the index: the row's fields and the keys, never the spec.
      const [entry] = await indexed(keys.endedBucket);
      expect(Object.keys(entry!).sort()).toEqual(
        [
          ...SUMMARY_FIELDS.filter((field) => (entry as Record<string, unknown>)[field] !== undefined),
          'pk',
          'sk',
          'endedBucket',
          'endedSk',
        ].sort(),
      );
      expect(entry).toMatchObject({ jobId: 'j1', state: 'succeeded', pool: 'etl', startedAt: NOW - H, endedAt: NOW - 10 });
      expect(entry).not.toHaveProperty('spec');
    });

    test('a dead job goes to the dead buckets; a cancelled one to the day’s; a redrive deletes the entry with the record', async () => {
      const dead = (await ledger.register(glue('d1'), NOW)).record;
      expect(await ledger.move(from(dead, JobState.Dead, { deadLetteredAt: NOW + 5, lastError: 'no pool' }), NOW)).toBe(true);
      // Its key's time is never before its deadLetteredAt: a Query from a time finds every job dead-lettered since.
      expect(await item('d1')).toMatchObject(endedKeys(JobState.Dead, NOW + 5, 'd1'));
      expect((await item('d1')).endedBucket).toBe(`2026-01-02#dead#${endedShardOf('d1')}`);
      const registered = await ledger.register(glue('c1'), NOW);
      expect(await ledger.move(from(registered.record, JobState.Cancelled, { endedAt: NOW + 1 }), NOW + 1)).toBe(true);
      expect(await item('c1')).toMatchObject(endedKeys(JobState.Cancelled, NOW + 1, 'c1'));
      // A redrive forgets the dead record: the index entry goes with it.
      const record = (await ledger.get('d1'))!;
      expect(await ledger.forget('d1', record.version)).toBe(true);
      expect(await indexed(endedKeys(JobState.Dead, NOW + 5, 'd1').endedBucket)).toEqual([]);
    });

    test('readJobsView: jobs ended over two days and many shards, a running and a waiting one, read with no Scan', async () => {
      await leases.createPool('etl', 1);
      // 40 jobs ended over the last 26 hours, three of them failed; one dead-lettered 10 days ago.
      const ended: string[] = [];
      for (let i = 0; i < 40; i++) {
        const id = `e-${i}`;
        const at = NOW - 26 * H + i * 39 * 60_000;
        const record = (await ledger.register(glue(id), at - 60_000)).record;
        const to = i % 13 === 5 ? JobState.Failed : JobState.Succeeded;
        expect(await ledger.move(from(record, to, { startedAt: at - 50_000, endedAt: at }), at)).toBe(true);
        ended.push(id);
      }
      const old = (await ledger.register(glue('dead-old'), NOW - 10 * DAY_MS)).record;
      expect(
        await ledger.move(from(old, JobState.Dead, { deadLetteredAt: NOW - 10 * DAY_MS, lastError: 'no pool' }), NOW - 10 * DAY_MS),
      ).toBe(true);
      const queued = (await ledger.register(glue('run-1'), NOW - H)).record;
      expect((await leases.take(unit('etl'), from(queued, JobState.Starting, { startedAt: NOW - H }), NOW - H)).outcome).toBe(
        TakeOutcome.Taken,
      );
      const waiting = (await ledger.register(glue('wait-1'), NOW - 1000)).record;
      const waiter: Waiter = {
        pool: 'etl',
        gate: 'etl',
        demand: unit('etl'),
        jobId: 'wait-1',
        kind: 'glue',
        waitKey: waitKey(NOW - 1000, 'wait-1'),
        body: JSON.stringify(glue('wait-1')),
        since: NOW - 1000,
      };
      expect(await leases.addWaiter(waiter)).toBe(true);
      expect(await ledger.move(from(waiting, JobState.Waiting), NOW - 1000)).toBe(true);

      const { doc, sent } = counting(fixtures().doc);
      const view = await readJobsView(doc, table.name, { recent: 100, deadLettered: 10, now: NOW, region: 'eu-west-1' });

      expect(sent.filter((command) => command === 'ScanCommand')).toEqual([]);
      // Two days of 16 shards of ended jobs, 15 days of 16 shards of dead ones.
      expect(sent.filter((command) => command === 'QueryCommand').length).toBeGreaterThanOrEqual(2 * 16 + 15 * 16);
      const inDay = ended.filter((_, i) => NOW - 26 * H + i * 39 * 60_000 >= NOW - 24 * H);
      expect(view.recent.map((job) => job.jobId).sort()).toEqual([...inDay, 'dead-old', 'run-1', 'wait-1'].sort());
      expect(view.recent.find((job) => job.jobId === 'run-1')).toMatchObject({ state: 'starting', target: 'job-run-1' });
      expect(view.recent.find((job) => job.jobId === 'wait-1')).toMatchObject({ state: 'waiting' });
      expect(view.deadLettered.map((job) => job.jobId)).toEqual(['dead-old']);
      expect(view.deadLettered[0]).toMatchObject({ lastError: 'no pool', target: 'job-dead-old' });
      // The history: the day's ended jobs and the one running.
      expect(view.runTimes.filter((times) => times.state !== 'starting')).toHaveLength(inDay.length);
      expect(view.runTimes.filter((times) => times.state === 'starting')).toEqual([
        { pool: 'etl', state: 'starting', startedAt: NOW - H, updatedAt: NOW - H },
      ]);
      expect(new Set(inDay.map((id) => endedShardOf(id))).size).toBeGreaterThan(8);
      expect(view.truncated).toBe(false);
    });
  });
}
