import fc from 'fast-check';
import { moveUpdate, toJobItem } from '../../../shared/adapters/dynamodb/jobItem';
import { daysCovering, ENDED_SHARDS, endedFromBound, endedKeys, endedShardOf } from '../../../shared/domain/endedIndex';
import { JobState, TERMINAL_STATES } from '../../../shared/domain/jobState';
import type { JobRecord } from '../../../shared/ports/jobLedger';

const AT = Date.parse('2026-01-02T03:04:05.678Z');

test('a move to a terminal state sets the ended keys from its time; any other move leaves them alone', () => {
  for (const to of TERMINAL_STATES) {
    const update = moveUpdate({ jobId: 'j1', version: 3, to }, AT, 'free', 30);
    expect(update.UpdateExpression).toContain('endedBucket = :endedBucket, endedSk = :endedSk');
    expect(update.ExpressionAttributeValues).toMatchObject({
      ':endedBucket': to === JobState.Dead ? `2026-01-02#dead#${endedShardOf('j1')}` : `2026-01-02#${endedShardOf('j1')}`,
      ':endedSk': `00${AT}#j1`,
    });
  }
  for (const to of [JobState.Queued, JobState.Waiting, JobState.Starting, JobState.Running, JobState.Reserved, JobState.Scheduled])
    expect(moveUpdate({ jobId: 'j1', version: 3, to }, AT, 'keep', 30).UpdateExpression).not.toContain('ended');
});

test("the key's time is never before the record's endedAt or deadLetteredAt (a Query from a time finds every job ended since)", () => {
  const update = moveUpdate({ jobId: 'j1', version: 3, to: JobState.Dead, patch: { deadLetteredAt: AT + 7 } }, AT, 'keep', 30);
  expect(update.ExpressionAttributeValues[':endedSk']).toBe(`00${AT + 7}#j1`);
});

test('a record written in a terminal state carries the keys; one written live does not', () => {
  const record = {
    jobId: 'j1',
    pool: 'p',
    kind: 'glue',
    spec: { kind: 'glue', id: 'j1', jobName: 'x' },
    version: 1,
    attempts: 0,
    firstSeenAt: AT,
    updatedAt: AT,
  } as unknown as JobRecord;
  expect(toJobItem({ ...record, state: JobState.Dead })).toMatchObject(endedKeys(JobState.Dead, AT, 'j1'));
  expect(toJobItem({ ...record, state: JobState.Queued })).not.toHaveProperty('endedBucket');
});

test('sort keys order as times do; shards are 0..15; the days covering a window are those its ends fall in', () => {
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 4e12 }), fc.integer({ min: 0, max: 4e12 }), fc.string(), (a, b, id) => {
      const [ka, kb] = [endedKeys(JobState.Succeeded, a, id).endedSk, endedKeys(JobState.Succeeded, b, id).endedSk];
      // DynamoDB orders string sort keys by their UTF-8 bytes, not by a locale's collation.
      expect(Math.sign(ka < kb ? -1 : ka > kb ? 1 : 0)).toBe(Math.sign(a - b));
      expect(ka >= endedFromBound(a)).toBe(true);
      expect(endedFromBound(a + 1) > ka).toBe(true);
      const shard = endedShardOf(id);
      expect(shard >= 0 && shard < ENDED_SHARDS).toBe(true);
    }),
  );
  expect(daysCovering(Date.parse('2026-01-01T03:00:00Z'), Date.parse('2026-01-02T03:00:00Z'))).toEqual(['2026-01-02', '2026-01-01']);
  expect(daysCovering(Date.parse('2026-01-02T00:00:00Z'), Date.parse('2026-01-02T23:59:59Z'))).toEqual(['2026-01-02']);
});
