import { JobState, TERMINAL_STATES } from '../../shared/domain/jobState';
import type { JobLedger, JobRecord, Move, RecordPatch } from '../../shared/ports/jobLedger';
import { type LeaseStore, TakeOutcome } from '../../shared/ports/leaseStore';
import { receiver, unit } from '../support/demands';
import type { JobSpec } from '../../shared/kinds/registry';

/**
 * The job records and the pools live in one store (one table on DynamoDB, one InMemoryStore in memory): the ledger and
 * the lease store of a fixture are two ports over the same records.
 */
export interface StoreFixture {
  ledger: JobLedger;
  leases: LeaseStore;
  /** the retention the store was built with (days) */
  retentionDays: number;
  /** Reads a job record's TTL attribute as stored (a raw GetItem on DynamoDB); undefined when the item has none. */
  expiresAtOf(jobId: string): Promise<number | undefined>;
  cleanup?(): Promise<void>;
}

export type JobLedgerFixture = StoreFixture;

export const T = 1_767_225_600_000; // 2026-01-01T00:00:00Z

export const appflow = (id: string, pool = 'default'): JobSpec => ({ id, pool, kind: 'appflow', flowName: `flow-${id}` });
export const glue = (id: string, pool = 'etl'): JobSpec => ({
  id,
  pool,
  kind: 'glue',
  jobName: `job-${id}`,
  arguments: { '--day': '2026-01-01', '--mode': 'full' },
});

/** The TTL DynamoDB acts on: epoch seconds, retention days after `now` (ms). */
export const expiryOf = (now: number, retentionDays: number) => Math.floor(now / 1000) + retentionDays * 86_400;

/**
 * What every JobLedger must do. `setup` gives an empty store (a fresh table, say) before each test; `cleanup` after it.
 */
export function describeJobLedgerContract(name: string, setup: () => Promise<JobLedgerFixture>, timeoutMs = 30_000): void {
  describe(`JobLedger contract: ${name}`, () => {
    let fixture: JobLedgerFixture;
    let ledger: JobLedger;

    beforeEach(async () => {
      fixture = await setup();
      ledger = fixture.ledger;
    }, timeoutMs);
    afterEach(async () => {
      await fixture?.cleanup?.();
    }, timeoutMs);

    /** A version-fenced move from the record as read. */
    const from = (record: JobRecord, to: JobState, patch?: RecordPatch): Move => ({
      jobId: record.jobId,
      version: record.version,
      to,
      patch,
    });

    /** Registers the job and walks it along `states` with ledger moves (no slots), one millisecond apart. */
    async function jobThrough(states: JobState[], spec: JobSpec = appflow('j1')): Promise<JobRecord> {
      let record = (await ledger.register(spec, T)).record;
      let now = T;
      for (const to of states) {
        expect(await ledger.move(from(record, to), ++now)).toBe(true);
        record = (await ledger.get(spec.id))!;
      }
      return record;
    }

    describe('register and get', () => {
      test('register records a new job as queued, version 1, no attempts, no slot, first seen now', async () => {
        // Act
        const result = await ledger.register(glue('g1'), T);
        // Assess
        const expected: JobRecord = {
          jobId: 'g1',
          pool: 'etl',
          kind: 'glue',
          state: 'queued',
          spec: glue('g1'),
          version: 1,
          attempts: 0,
          firstSeenAt: T,
          updatedAt: T,
        };
        expect(result).toEqual({ created: true, record: expected });
        expect(await ledger.get('g1')).toEqual(expected);
        expect(await fixture.expiresAtOf('g1')).toBeUndefined();
      });

      test('a second register returns the stored record (created=false) and changes nothing', async () => {
        // Prepare
        const first = (await ledger.register(appflow('j1', 'p1'), T)).record;
        expect(await ledger.move(from(first, 'waiting'), T + 5)).toBe(true);
        const stored = await ledger.get('j1');
        // Act: a later delivery, even one carrying a different spec under the same id
        const again = await ledger.register(appflow('j1', 'p2'), T + 10);
        // Assess
        expect(again.created).toBe(false);
        expect(again.record).toEqual(stored);
        expect(again.record).toMatchObject({ state: 'waiting', pool: 'p1', version: 2, firstSeenAt: T, updatedAt: T + 5 });
        expect(again.record.spec).toEqual(appflow('j1', 'p1'));
        expect(await ledger.get('j1')).toEqual(stored);
      });

      test('concurrent registers of one job: exactly one creates it, all see the same record', async () => {
        const results = await Promise.all(Array.from({ length: 10 }, (_, i) => ledger.register(appflow('j1'), T + i)));
        expect(results.filter((r) => r.created)).toHaveLength(1);
        const created = results.find((r) => r.created)!.record;
        for (const r of results) expect(r.record).toEqual(created);
        expect(await ledger.get('j1')).toEqual(created);
      });

      test('get of an unknown job is undefined', async () => {
        expect(await ledger.get('nobody')).toBeUndefined();
      });

      test('the spec reads back exactly, arguments included', async () => {
        await ledger.register(glue('g1'), T);
        expect((await ledger.get('g1'))!.spec).toEqual(glue('g1'));
      });
    });

    describe('move', () => {
      test('a move at the current version applies: state, updatedAt, version + 1, the defined patch fields', async () => {
        // Prepare
        const record = await jobThrough(['starting']);
        // Act
        const moved = await ledger.move(
          from(record, 'running', { executionId: 'exec-9', startedAt: T + 99, attempts: 1, startRequested: true, lastError: undefined }),
          T + 100,
        );
        // Assess
        expect(moved).toBe(true);
        const after = await ledger.get('j1');
        expect(after).toEqual({
          ...record,
          state: 'running',
          version: record.version + 1,
          updatedAt: T + 100,
          executionId: 'exec-9',
          startedAt: T + 99,
          attempts: 1,
          startRequested: true,
        });
        expect(after).not.toHaveProperty('lastError');
        expect(after).not.toHaveProperty('expiresAt');
      });

      test('every patch field reads back as written', async () => {
        const record = await jobThrough(['starting']);
        const patch: Required<RecordPatch> = {
          attempts: 3,
          firstStartAt: T + 1,
          startedAt: T + 2,
          endedAt: T + 3,
          executionId: 'exec-1',
          lastError: 'ThrottlingException: Rate exceeded',
          startRequested: true,
          attempt: 'msg-1',
          claimableAt: T + 60_000,
          leaseUntil: T + 3_600_000,
          deadLetteredAt: T + 4,
          waitRank: 7,
          replacesRun: 'exec-0',
          endedBy: 'end/abc',
        };
        expect(await ledger.move(from(record, 'starting', patch), T + 10)).toBe(true);
        expect(await ledger.get('j1')).toEqual({ ...record, ...patch, version: record.version + 1, updatedAt: T + 10 });
      });

      test('undefined patch fields leave the stored values as they are', async () => {
        // Prepare
        const record = await jobThrough(['starting']);
        expect(await ledger.move(from(record, 'starting', { lastError: 'boom', attempt: 'msg-1', attempts: 1 }), T + 10)).toBe(true);
        const before = (await ledger.get('j1'))!;
        // Act
        expect(
          await ledger.move(
            from(before, 'starting', { lastError: undefined, attempt: 'msg-2', attempts: undefined, claimableAt: undefined }),
            T + 20,
          ),
        ).toBe(true);
        // Assess
        const after = await ledger.get('j1');
        expect(after).toEqual({ ...before, attempt: 'msg-2', version: before.version + 1, updatedAt: T + 20 });
        expect(after).not.toHaveProperty('claimableAt');
      });

      test('a stale version (older or newer) changes nothing and returns false', async () => {
        // Prepare
        const record = await jobThrough(['starting', 'running']);
        // Act
        const older = await ledger.move({ ...from(record, 'succeeded', { endedAt: T + 50 }), version: record.version - 1 }, T + 50);
        const newer = await ledger.move({ ...from(record, 'failed', { lastError: 'x' }), version: record.version + 1 }, T + 50);
        // Assess
        expect([older, newer]).toEqual([false, false]);
        expect(await ledger.get('j1')).toEqual(record);
        expect(await fixture.expiresAtOf('j1')).toBeUndefined();
      });

      test('a move read before another move is stale: the second writer of one read loses', async () => {
        const record = await jobThrough([]);
        expect(await ledger.move(from(record, 'waiting'), T + 1)).toBe(true);
        expect(await ledger.move(from(record, 'starting', { attempts: 1 }), T + 2)).toBe(false);
        expect(await ledger.get('j1')).toMatchObject({ state: 'waiting', version: 2, attempts: 0, updatedAt: T + 1 });
      });

      test('moving an unknown job returns false and creates nothing', async () => {
        expect(await ledger.move({ jobId: 'nobody', version: 1, to: 'dead', patch: { lastError: 'x' } }, T)).toBe(false);
        expect(await ledger.get('nobody')).toBeUndefined();
      });

      test('concurrent moves from one read: exactly one applies', async () => {
        const record = await jobThrough([]);
        const results = await Promise.all([
          ledger.move(from(record, 'starting', { attempt: 'a' }), T + 1),
          ledger.move(from(record, 'starting', { attempt: 'b' }), T + 2),
          ledger.move(from(record, 'waiting'), T + 3),
          ledger.move(from(record, 'dead', { lastError: 'unknown pool' }), T + 4),
        ]);
        expect(results.filter(Boolean)).toHaveLength(1);
        expect((await ledger.get('j1'))!.version).toBe(2);
      });

      test('a move keeps the slot the job holds', async () => {
        // Prepare
        await fixture.leases.createPool('default', 1);
        const queued = (await ledger.register(appflow('j1'), T)).record;
        expect((await fixture.leases.take(unit('default'), from(queued, 'starting'), T + 1)).outcome).toBe(TakeOutcome.Taken);
        const starting = (await ledger.get('j1'))!;
        // Act
        expect(await ledger.move(from(starting, 'running', { executionId: 'exec-1' }), T + 2)).toBe(true);
        // Assess
        expect(await ledger.get('j1')).toMatchObject({ state: 'running', lease: { pool: 'default', since: T + 1 }, version: 3 });
        expect(await fixture.leases.getPool('default')).toEqual({ name: 'default', limit: 1, inUse: 1 });
      });
    });

    describe('forget (a redrive)', () => {
      test('deletes a dead job that never asked for a start, at the version read; the id can then be registered anew', async () => {
        const dead = await jobThrough(['dead']);
        expect(await ledger.forget('j1', dead.version - 1)).toBe(false);
        expect(await ledger.forget('j1', dead.version)).toBe(true);
        expect(await ledger.get('j1')).toBeUndefined();
        expect((await ledger.register(appflow('j1'), T + 50)).created).toBe(true);
      });

      test('keeps a job that is not dead, or asked for a start (a run may exist under its id)', async () => {
        const queued = await jobThrough([]);
        expect(await ledger.forget('j1', queued.version)).toBe(false);
        const record = await jobThrough(['dead'], appflow('j2'));
        expect(await ledger.move(from(record, 'dead', { startRequested: true }), T + 9)).toBe(true);
        expect(await ledger.forget('j2', record.version + 1)).toBe(false);
        expect(await ledger.get('j2')).toMatchObject({ state: 'dead', startRequested: true });
        expect(await ledger.forget('nobody', 1)).toBe(false);
      });
    });

    describe('retention', () => {
      test.each(TERMINAL_STATES.map((s) => [s]))(
        'a job reaching %s without a slot gets expiresAt = now (s) + retention',
        async (terminal) => {
          // Prepare
          // Dead and cancelled are reached from queued; succeeded and failed from a start.
          const record = await jobThrough(terminal === JobState.Dead || terminal === JobState.Cancelled ? [] : ['starting']);
          expect(await fixture.expiresAtOf('j1')).toBeUndefined();
          // Act
          const now = T + 123_456;
          expect(await ledger.move(from(record, terminal as JobState, { endedAt: now }), now)).toBe(true);
          // Assess
          expect(await fixture.expiresAtOf('j1')).toBe(expiryOf(now, fixture.retentionDays));
          expect(await ledger.get('j1')).not.toHaveProperty('expiresAt');
        },
      );

      test('a job that is not finished has no expiresAt', async () => {
        await jobThrough(['waiting', 'reserved', 'starting', 'running']);
        expect(await fixture.expiresAtOf('j1')).toBeUndefined();
      });

      test('a dead job that keeps its slot has no expiresAt until the slot is given back', async () => {
        // Prepare: given up while a run may exist (giveUpKeep)
        await fixture.leases.createPool('default', 1);
        const queued = (await ledger.register(appflow('j1'), T)).record;
        expect((await fixture.leases.take(unit('default'), from(queued, 'starting'), T + 1)).outcome).toBe(TakeOutcome.Taken);
        const starting = (await ledger.get('j1'))!;
        // Act
        expect(await ledger.move(from(starting, 'dead', { lastError: 'timeout', leaseUntil: T + 3_600_000 }), T + 2)).toBe(true);
        const dead = (await ledger.get('j1'))!;
        const keptExpiry = await fixture.expiresAtOf('j1');
        expect(await fixture.leases.free(unit('default'), from(dead, 'dead'), T + 3_600_001)).toBe(true);
        // Assess
        expect(dead).toMatchObject({ state: 'dead', lease: { pool: 'default', since: T + 1 } });
        expect(keptExpiry).toBeUndefined();
        expect(await fixture.expiresAtOf('j1')).toBe(expiryOf(T + 3_600_001, fixture.retentionDays));
      });
    });

    describe('runs', () => {
      test('recordRun / findRun: a run leads back to its job and pool', async () => {
        await ledger.recordRun({ kind: 'glue', executionId: 'jr_1', jobId: 'g1', pool: 'etl' }, T);
        expect(await ledger.findRun('glue', 'jr_1')).toEqual({ kind: 'glue', executionId: 'jr_1', jobId: 'g1', pool: 'etl' });
      });

      test('an unknown run, or the same id under another kind, is not found', async () => {
        await ledger.recordRun({ kind: 'glue', executionId: 'x1', jobId: 'g1', pool: 'etl' }, T);
        expect(await ledger.findRun('glue', 'x2')).toBeUndefined();
        expect(await ledger.findRun('appflow', 'x1')).toBeUndefined();
      });

      test('recording a run twice is harmless', async () => {
        const ref = { kind: 'appflow' as const, executionId: 'e1', jobId: 'j1', pool: 'default' };
        await ledger.recordRun(ref, T);
        await ledger.recordRun(ref, T + 5);
        expect(await ledger.findRun('appflow', 'e1')).toEqual(ref);
      });

      test('a completion noted before its run is recorded is handed to every recordRun of the run, and is not a run', async () => {
        const early = { kind: 'glue' as const, executionId: 'jr_9', outcome: 'failed' as const, name: 'etl--x', detail: 'FAILED: boom' };
        expect(await ledger.noteEarlyCompletion(early, T)).toBe(true);
        expect(await ledger.findRun('glue', 'jr_9')).toBeUndefined();
        // A duplicate event notes it again, harmlessly.
        expect(await ledger.noteEarlyCompletion(early, T + 1)).toBe(true);

        const ref = { kind: 'glue' as const, executionId: 'jr_9', jobId: 'g9', pool: 'etl' };
        expect(await ledger.recordRun(ref, T + 2)).toEqual(early);
        expect(await ledger.findRun('glue', 'jr_9')).toEqual(ref);
        // Again: a retry whose first answer was lost, or the next attempt after one that died before completing the run.
        expect(await ledger.recordRun(ref, T + 3)).toEqual(early);
      });

      test('notedCompletion: the completion noted for a run, before and after the run is recorded; nothing for another', async () => {
        const early = { kind: 'callback' as const, executionId: 'cbr.1', outcome: 'succeeded' as const, name: 'w' };
        expect(await ledger.notedCompletion('callback', 'cbr.1')).toBeUndefined();
        expect(await ledger.noteEarlyCompletion(early, T)).toBe(true);
        expect(await ledger.notedCompletion('callback', 'cbr.1')).toEqual(early);
        await ledger.recordRun({ kind: 'callback', executionId: 'cbr.1', jobId: 'c1', pool: 'default' }, T + 1);
        expect(await ledger.notedCompletion('callback', 'cbr.1')).toEqual(early);
        expect(await ledger.notedCompletion('callback', 'cbr.2')).toBeUndefined();
        expect(await ledger.notedCompletion('glue', 'cbr.1')).toBeUndefined();
      });

      test('keepCompletion keeps a completion on a recorded run too (a release that could not be written); on one not recorded it is not a run', async () => {
        const ref = { kind: 'callback' as const, executionId: 'cbr.7', jobId: 'c7', pool: 'default' };
        await ledger.recordRun(ref, T);
        const kept = { kind: 'callback' as const, executionId: 'cbr.7', outcome: 'succeeded' as const, name: 'c7' };
        await ledger.keepCompletion(kept, T + 1);
        // Again, and another report after it: the first kept wins, as the first applied would.
        await ledger.keepCompletion(kept, T + 2);
        await ledger.keepCompletion({ ...kept, outcome: 'failed', detail: 'late' }, T + 3);
        expect(await ledger.notedCompletion('callback', 'cbr.7')).toEqual(kept);
        expect(await ledger.findRun('callback', 'cbr.7')).toEqual(ref);
        expect(await ledger.recordRun(ref, T + 3)).toEqual(kept);

        const other = { kind: 'glue' as const, executionId: 'jr_8', outcome: 'failed' as const, name: 'etl', detail: 'boom' };
        await ledger.keepCompletion(other, T);
        expect(await ledger.findRun('glue', 'jr_8')).toBeUndefined();
        expect(await ledger.notedCompletion('glue', 'jr_8')).toEqual(other);
      });

      test('recordRun of a run with nothing noted returns nothing; the same id under another kind is another run', async () => {
        expect(await ledger.noteEarlyCompletion({ kind: 'appflow', executionId: 'e1', outcome: 'succeeded', name: 'f' }, T)).toBe(true);
        expect(await ledger.recordRun({ kind: 'glue', executionId: 'e1', jobId: 'g1', pool: 'etl' }, T)).toBeUndefined();
      });

      test('a completion of a recorded run is not noted (the caller completes the run instead)', async () => {
        const ref = { kind: 'appflow' as const, executionId: 'e1', jobId: 'j1', pool: 'default' };
        await ledger.recordRun(ref, T);
        expect(await ledger.noteEarlyCompletion({ kind: 'appflow', executionId: 'e1', outcome: 'succeeded', name: 'f' }, T + 1)).toBe(
          false,
        );
        expect(await ledger.findRun('appflow', 'e1')).toEqual(ref);
        expect(await ledger.recordRun(ref, T + 2)).toBeUndefined();
      });

      test('a run is not a job: recording and finding it neither creates nor changes a job record', async () => {
        const record = (await ledger.register(appflow('j2'), T)).record;
        await ledger.recordRun({ kind: 'appflow', executionId: 'e1', jobId: 'j1', pool: 'default' }, T);
        await ledger.recordRun({ kind: 'appflow', executionId: 'e2', jobId: 'j2', pool: 'default' }, T + 1);
        await ledger.findRun('appflow', 'e2');
        expect(await ledger.get('j1')).toBeUndefined();
        expect(await ledger.get('j2')).toEqual(record);
      });
    });

    describe('heartbeat (a callback run says it is alive)', () => {
      /** A job running run `executionId` (started at T + 2). */
      async function running(executionId: string): Promise<JobRecord> {
        const queued = (await ledger.register(appflow('j1'), T)).record;
        expect(await ledger.move(from(queued, JobState.Starting), T + 1)).toBe(true);
        const starting = (await ledger.get('j1'))!;
        expect(await ledger.move(from(starting, JobState.Running, { executionId, startedAt: T + 2 }), T + 2)).toBe(true);
        return (await ledger.get('j1'))!;
      }

      test('sets heartbeatAt and updatedAt and adds one to the version; state, run and everything else stay', async () => {
        const before = await running('run-1');
        expect(before.heartbeatAt).toBeUndefined();
        expect(await ledger.heartbeat('j1', 'run-1', T + 10)).toBe(true);
        expect(await ledger.get('j1')).toEqual({ ...before, heartbeatAt: T + 10, updatedAt: T + 10, version: before.version + 1 });
        expect(await ledger.heartbeat('j1', 'run-1', T + 20)).toBe(true);
        expect((await ledger.get('j1'))!.heartbeatAt).toBe(T + 20);
      });

      test('a move read before a heartbeat is stale: the heartbeat wins over a decision taken on the older read', async () => {
        const read = await running('run-1');
        expect(await ledger.heartbeat('j1', 'run-1', T + 10)).toBe(true);
        expect(await ledger.move(from(read, JobState.Failed, { endedAt: T + 11, lastError: 'timed out' }), T + 11)).toBe(false);
        expect((await ledger.get('j1'))!.state).toBe(JobState.Running);
      });

      test('changes nothing for another run, a job not running, a finished job or an unknown one', async () => {
        const record = await running('run-1');
        expect(await ledger.heartbeat('j1', 'run-2', T + 10)).toBe(false);
        expect(await ledger.heartbeat('nobody', 'run-1', T + 10)).toBe(false);
        expect(await ledger.get('nobody')).toBeUndefined();
        expect(await ledger.get('j1')).toEqual(record);

        const other = (await ledger.register(appflow('j2'), T)).record;
        expect(await ledger.move(from(other, JobState.Starting, { executionId: 'run-9' }), T + 1)).toBe(true);
        const starting = (await ledger.get('j2'))!;
        expect(await ledger.heartbeat('j2', 'run-9', T + 10)).toBe(false);
        expect(await ledger.get('j2')).toEqual(starting);

        expect(await ledger.move(from(record, JobState.Succeeded, { endedAt: T + 30 }), T + 30)).toBe(true);
        const done = (await ledger.get('j1'))!;
        expect(await ledger.heartbeat('j1', 'run-1', T + 40)).toBe(false);
        expect(await ledger.get('j1')).toEqual(done);
      });
    });
  });
}
