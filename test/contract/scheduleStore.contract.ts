import { bucketKey, dueBucket, dueSortKey, minuteOf } from '../../shared/domain/notBefore';
import { JobState } from '../../shared/domain/jobState';
import { registeredRecord, type JobLedger, type JobRecord } from '../../shared/ports/jobLedger';
import { type LeaseStore, TakeOutcome } from '../../shared/ports/leaseStore';
import type { ScheduleStore } from '../../shared/ports/scheduleStore';
import { waitKey } from '../../shared/domain/waiting';
import { unit } from '../support/demands';
import type { JobSpec } from '../../shared/kinds/registry';

export interface ScheduleStoreFixture {
  schedule: ScheduleStore;
  ledger: JobLedger;
  leases: LeaseStore;
  cleanup?(): Promise<void>;
}

const T = 1_767_225_600_000; // 2026-01-01T00:00:00Z
const HOUR = 3_600_000;
const spec = (id: string, dueAt: number): JobSpec => ({
  id,
  pool: 'default',
  kind: 'appflow',
  flowName: `flow-${id}`,
  notBefore: new Date(dueAt).toISOString(),
});
const scheduled = (id: string, dueAt: number): JobRecord => ({ ...registeredRecord(spec(id, dueAt), T), state: JobState.Scheduled });
const indexOf = (id: string, dueAt: number) => ({ bucket: dueBucket(dueAt, id), sortKey: dueSortKey(dueAt, id) });

/** What every ScheduleStore must do, over the same records as the fixture's ledger and lease store. */
export function describeScheduleStoreContract(name: string, setup: () => Promise<ScheduleStoreFixture>, timeoutMs = 30_000): void {
  describe(`ScheduleStore contract: ${name}`, () => {
    let f: ScheduleStoreFixture;
    beforeEach(async () => {
      f = await setup();
    }, timeoutMs);
    afterEach(async () => {
      await f?.cleanup?.();
    }, timeoutMs);

    /** Every job of a bucket due by `upTo`, reading page by page. */
    async function allDue(bucket: string, upTo: number, max: number): Promise<string[]> {
      const ids: string[] = [];
      let after: string | undefined;
      do {
        const page = await f.schedule.due(bucket, upTo, { after, max });
        ids.push(...page.jobs.map((j) => j.jobId));
        after = page.next;
      } while (after !== undefined);
      return ids;
    }

    test('schedule writes a scheduled record once; a second write for the id changes nothing', async () => {
      expect(await f.schedule.schedule(scheduled('a', T + 2 * HOUR), indexOf('a', T + 2 * HOUR))).toBe(true);
      expect(await f.schedule.schedule(scheduled('a', T + 5 * HOUR), indexOf('a', T + 5 * HOUR))).toBe(false);
      expect(await f.ledger.get('a')).toMatchObject({ state: 'scheduled', version: 1, spec: spec('a', T + 2 * HOUR) });
      expect(await allDue(dueBucket(T + 5 * HOUR, 'a'), T + 6 * HOUR, 10)).toEqual([]);
    });

    test('due lists a bucket in due order, only up to the time asked, a page at a time', async () => {
      // Jobs due in one minute and one shard: ids chosen to land in the same shard as 'x0'.
      const dueAt = T + 2 * HOUR;
      const bucket = dueBucket(dueAt, 'x0');
      const ids: string[] = [];
      for (let i = 0; ids.length < 5; i++) if (dueBucket(dueAt, `x${i}`) === bucket) ids.push(`x${i}`);
      for (const [i, id] of ids.entries())
        await f.schedule.schedule(scheduled(id, dueAt + (4 - i) * 1000), indexOf(id, dueAt + (4 - i) * 1000));
      // Due order: the last written is due first.
      expect(await allDue(bucket, dueAt + 60_000, 2)).toEqual([...ids].reverse());
      const page = await f.schedule.due(bucket, dueAt + 2000, { max: 10 });
      expect(page.jobs).toEqual([
        { jobId: ids[4], dueAt },
        { jobId: ids[3], dueAt: dueAt + 1000 },
        { jobId: ids[2], dueAt: dueAt + 2000 },
      ]);
      expect(page.next).toBeUndefined();
      // Another minute's bucket of the same shard holds none of them.
      expect(await allDue(bucketKey(minuteOf(dueAt) + 1, Number(bucket.split('#')[1])), dueAt + HOUR, 10)).toEqual([]);
    });

    test('a job scheduled without index keys (its delayed copy carries it) is never listed', async () => {
      await f.schedule.schedule(scheduled('near', T + 600_000));
      expect(await allDue(dueBucket(T + 600_000, 'near'), T + HOUR, 10)).toEqual([]);
      expect((await f.ledger.get('near'))!.state).toBe('scheduled');
    });

    test('load moves a scheduled job to queued, fenced by its version, and off the due index', async () => {
      const dueAt = T + 2 * HOUR;
      await f.schedule.schedule(scheduled('a', dueAt), indexOf('a', dueAt));
      expect(await f.schedule.load({ jobId: 'a', version: 2, to: JobState.Queued }, T + 1)).toBe(false);
      expect(await f.schedule.load({ jobId: 'a', version: 1, to: JobState.Queued }, T + 1)).toBe(true);
      expect(await f.ledger.get('a')).toMatchObject({ state: 'queued', version: 2, updatedAt: T + 1 });
      expect(await allDue(dueBucket(dueAt, 'a'), dueAt, 10)).toEqual([]);
      // A second load (another loader that read version 1, or the same one again) changes nothing.
      expect(await f.schedule.load({ jobId: 'a', version: 1, to: JobState.Queued }, T + 2)).toBe(false);
      expect(await f.schedule.load({ jobId: 'a', version: 2, to: JobState.Queued }, T + 2)).toBe(false);
    });

    test("a scheduled job taken by its delivery leaves the due index in the take's own write", async () => {
      const dueAt = T + 2 * HOUR;
      await f.leases.createPool('default', 2);
      await f.schedule.schedule(scheduled('a', dueAt), indexOf('a', dueAt));
      const taken = await f.leases.take(unit('default'), { jobId: 'a', version: 1, to: JobState.Starting }, dueAt);
      expect(taken.outcome).toBe(TakeOutcome.Taken);
      expect(await allDue(dueBucket(dueAt, 'a'), dueAt, 10)).toEqual([]);
    });

    test('the loader cursor starts unset and only moves forward', async () => {
      expect(await f.schedule.loaderCursor()).toBeUndefined();
      await f.schedule.advanceLoaderCursor(100);
      await f.schedule.advanceLoaderCursor(90);
      expect(await f.schedule.loaderCursor()).toBe(100);
      await f.schedule.advanceLoaderCursor(101);
      expect(await f.schedule.loaderCursor()).toBe(101);
    });

    test('cancel: a scheduled job becomes cancelled (fenced by its version) and leaves the due index', async () => {
      const dueAt = T + 2 * HOUR;
      await f.schedule.schedule(scheduled('a', dueAt), indexOf('a', dueAt));
      expect(await f.schedule.cancel({ jobId: 'a', version: 7, to: JobState.Cancelled }, T + 1)).toBe(false);
      expect(await f.schedule.cancel({ jobId: 'a', version: 1, to: JobState.Cancelled }, T + 1)).toBe(true);
      expect(await f.ledger.get('a')).toMatchObject({ state: 'cancelled', version: 2 });
      expect(await allDue(dueBucket(dueAt, 'a'), dueAt, 10)).toEqual([]);
    });

    test("cancel: a waiting job's waiter item goes in the same write; a job holding a slot is never cancelled", async () => {
      await f.leases.createPool('default', 1);
      const holder = (await f.ledger.register(spec('h', T), T)).record;
      expect((await f.leases.take(unit('default'), { jobId: 'h', version: holder.version, to: JobState.Starting }, T)).outcome).toBe(
        TakeOutcome.Taken,
      );
      expect(await f.schedule.cancel({ jobId: 'h', version: holder.version + 1, to: JobState.Cancelled }, T)).toBe(false);
      expect((await f.ledger.get('h'))!.state).toBe('starting');
      // A waiting job
      const w = (await f.ledger.register(spec('w', T), T)).record;
      const key = waitKey(T, 'w');
      await f.leases.addWaiter({ pool: 'default', gate: 'default', jobId: 'w', kind: 'appflow', waitKey: key, body: '{}', since: T });
      expect(await f.ledger.move({ jobId: 'w', version: w.version, to: JobState.Waiting }, T)).toBe(true);
      expect(
        await f.schedule.cancel({ jobId: 'w', version: w.version + 1, to: JobState.Cancelled }, T + 1, { gate: 'default', waitKey: key }),
      ).toBe(true);
      expect((await f.ledger.get('w'))!.state).toBe('cancelled');
      expect(await f.leases.oldestWaiters('default', 10)).toEqual([]);
    });
  });
}
