import type { JobSpec } from '../../shared/domain/job';
import { JobState, sourcesOf, STARTABLE_STATES, TERMINAL_STATES } from '../../shared/domain/jobState';
import type { JobLedger } from '../../shared/ports/jobLedger';

export interface JobLedgerFixture {
  ledger: JobLedger;
  /** the retention the ledger was built with (days) */
  retentionDays: number;
  /** Reads the TTL attribute as stored (a raw GetItem on DynamoDB); undefined when the item has none. */
  expiresAtOf?(jobId: string): Promise<number | undefined>;
  cleanup?(): Promise<void>;
}

const T = 1_767_225_600_000; // 2026-01-01T00:00:00Z

const appflow = (id: string, pool = 'default'): JobSpec => ({ id, pool, kind: 'appflow', flowName: `flow-${id}` });
const glue = (id: string, pool = 'etl'): JobSpec => ({
  id,
  pool,
  kind: 'glue',
  jobName: `job-${id}`,
  arguments: { '--day': '2026-01-01', '--mode': 'full' },
});

/**
 * What every JobLedger must do. `setup` gives an empty ledger before each test.
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

    /** Walks a new job along allowed moves to `state`. */
    async function jobIn(state: JobState, spec: JobSpec = appflow('j1'), executionId = 'exec-1'): Promise<JobSpec> {
      await ledger.register(spec, T);
      const path: Record<JobState, Array<[JobState, JobState]>> = {
        queued: [],
        waiting: [['queued', 'waiting']],
        starting: [['queued', 'starting']],
        running: [
          ['queued', 'starting'],
          ['starting', 'running'],
        ],
        succeeded: [
          ['queued', 'starting'],
          ['starting', 'running'],
          ['running', 'succeeded'],
        ],
        failed: [
          ['queued', 'starting'],
          ['starting', 'running'],
          ['running', 'failed'],
        ],
        dead: [['queued', 'dead']],
      };
      let now = T;
      for (const [from, to] of path[state]) {
        const patch = to === 'running' ? { executionId, startedAt: now + 1 } : {};
        expect(await ledger.transition(spec.id, [from], to, ++now, patch)).toBe(true);
      }
      return spec;
    }

    describe('register and get', () => {
      test('register records a new job as queued, with no attempts, first seen now', async () => {
        // Act
        const result = await ledger.register(glue('g1'), T);
        // Assess
        const expected = {
          jobId: 'g1',
          pool: 'etl',
          kind: 'glue',
          state: 'queued',
          spec: glue('g1'),
          attempts: 0,
          firstSeenAt: T,
          updatedAt: T,
        };
        expect(result).toEqual({ created: true, record: expected });
        expect(await ledger.get('g1')).toEqual(expected);
      });

      test('a second register returns the stored record (created=false) and changes nothing', async () => {
        // Prepare
        await ledger.register(appflow('j1', 'p1'), T);
        await ledger.transition('j1', ['queued'], 'waiting', T + 5);
        // Act: a later delivery, even one carrying a different spec under the same id
        const again = await ledger.register(appflow('j1', 'p2'), T + 10);
        // Assess
        expect(again.created).toBe(false);
        expect(again.record).toMatchObject({ state: 'waiting', pool: 'p1', firstSeenAt: T, updatedAt: T + 5 });
        expect(again.record.spec).toEqual(appflow('j1', 'p1'));
        expect(await ledger.get('j1')).toEqual(again.record);
      });

      test('concurrent registers of one job: exactly one creates it', async () => {
        const results = await Promise.all(Array.from({ length: 10 }, (_, i) => ledger.register(appflow('j1'), T + i)));
        expect(results.filter((r) => r.created)).toHaveLength(1);
        const firstSeen = results.find((r) => r.created)!.record.firstSeenAt;
        for (const r of results) expect(r.record.firstSeenAt).toBe(firstSeen);
      });

      test('get of an unknown job is undefined', async () => {
        expect(await ledger.get('nobody')).toBeUndefined();
      });

      test('the spec reads back exactly, arguments included', async () => {
        await ledger.register(glue('g1'), T);
        expect((await ledger.get('g1'))!.spec).toEqual(glue('g1'));
      });
    });

    describe('transition', () => {
      test('an allowed move changes state and updatedAt and applies the defined patch fields', async () => {
        // Prepare
        await jobIn('starting');
        // Act
        const moved = await ledger.transition('j1', ['starting'], 'running', T + 100, {
          executionId: 'exec-9',
          startedAt: T + 99,
          attempts: 1,
          lastError: undefined,
        });
        // Assess
        expect(moved).toBe(true);
        const record = await ledger.get('j1');
        expect(record).toMatchObject({
          state: 'running',
          updatedAt: T + 100,
          executionId: 'exec-9',
          startedAt: T + 99,
          attempts: 1,
          firstSeenAt: T,
        });
        expect(record).not.toHaveProperty('lastError');
        expect(record).not.toHaveProperty('expiresAt');
      });

      test('a move from a state the job is not in returns false and changes nothing', async () => {
        // Prepare
        await jobIn('running');
        const before = await ledger.get('j1');
        // Act
        const moved = await ledger.transition('j1', ['queued', 'waiting'], 'starting', T + 100, { attempts: 7 });
        // Assess
        expect(moved).toBe(false);
        expect(await ledger.get('j1')).toEqual(before);
      });

      test.each(TERMINAL_STATES.map((s) => [s]))('a %s job never moves again, whatever the replay', async (terminal) => {
        // Prepare
        await jobIn(terminal as JobState);
        const before = await ledger.get('j1');
        // Act: replay every move a late message or event could try
        const attempts = await Promise.all([
          ledger.transition('j1', STARTABLE_STATES, 'starting', T + 50),
          ledger.transition('j1', ['starting'], 'running', T + 50, { executionId: 'exec-1' }),
          ledger.transition('j1', ['starting', 'running'], 'failed', T + 50, {}, 'exec-1'),
          ledger.transition('j1', ['starting'], 'queued', T + 50),
        ]);
        // Assess
        expect(attempts).toEqual([false, false, false, false]);
        expect(await ledger.get('j1')).toEqual(before);
      });

      test('a replay cannot move a job backwards: starting -> queued only from starting', async () => {
        await jobIn('running');
        expect(await ledger.transition('j1', ['starting'], 'queued', T + 50)).toBe(false);
        expect((await ledger.get('j1'))!.state).toBe('running');
      });

      test('moving an unknown job returns false and creates nothing', async () => {
        expect(await ledger.transition('nobody', sourcesOf('dead'), 'dead', T)).toBe(false);
        expect(await ledger.get('nobody')).toBeUndefined();
      });

      test('two concurrent moves from the same state: exactly one wins', async () => {
        await jobIn('queued');
        // All from `queued`: once one has moved the job, none of the others' source states holds. (From
        // STARTABLE_STATES, queued -> waiting then waiting -> starting would both be right.)
        const results = await Promise.all([
          ledger.transition('j1', ['queued'], 'starting', T + 1),
          ledger.transition('j1', ['queued'], 'starting', T + 2),
          ledger.transition('j1', ['queued'], 'waiting', T + 3),
        ]);
        expect(results.filter(Boolean)).toHaveLength(1);
      });

      describe('expectExecutionId', () => {
        test('matches the recorded execution: moves', async () => {
          await jobIn('running', appflow('j1'), 'exec-1');
          expect(await ledger.transition('j1', ['starting', 'running'], 'succeeded', T + 50, { endedAt: T + 50 }, 'exec-1')).toBe(true);
          expect(await ledger.get('j1')).toMatchObject({ state: 'succeeded', executionId: 'exec-1', endedAt: T + 50 });
        });

        test('another execution recorded: does not move', async () => {
          await jobIn('running', appflow('j1'), 'exec-1');
          expect(await ledger.transition('j1', ['starting', 'running'], 'succeeded', T + 50, { executionId: 'exec-2' }, 'exec-2')).toBe(
            false,
          );
          expect(await ledger.get('j1')).toMatchObject({ state: 'running', executionId: 'exec-1' });
        });

        test('no execution recorded yet (the event beat the acquirer): moves and records it', async () => {
          await jobIn('starting');
          expect(
            await ledger.transition(
              'j1',
              ['starting', 'running'],
              'failed',
              T + 50,
              { executionId: 'exec-7', lastError: 'boom' },
              'exec-7',
            ),
          ).toBe(true);
          expect(await ledger.get('j1')).toMatchObject({ state: 'failed', executionId: 'exec-7', lastError: 'boom' });
        });

        test('the state condition still applies', async () => {
          await jobIn('queued');
          expect(await ledger.transition('j1', ['starting', 'running'], 'failed', T + 50, {}, 'exec-7')).toBe(false);
        });
      });
    });

    describe('claimStart', () => {
      test('claims a starting job not touched since it was read, and touches it', async () => {
        // Prepare
        await jobIn('starting');
        const seen = (await ledger.get('j1'))!.updatedAt;
        // Act
        const claimed = await ledger.claimStart('j1', seen, seen + 60_000);
        // Assess
        expect(claimed).toBe(true);
        expect(await ledger.get('j1')).toMatchObject({ state: 'starting', updatedAt: seen + 60_000 });
      });

      test('a stale read loses: the record changed since', async () => {
        await jobIn('starting');
        const seen = (await ledger.get('j1'))!.updatedAt;
        expect(await ledger.claimStart('j1', seen, seen + 10)).toBe(true);
        expect(await ledger.claimStart('j1', seen, seen + 20)).toBe(false);
      });

      test('only a job in starting can be claimed', async () => {
        await jobIn('running');
        const seen = (await ledger.get('j1'))!.updatedAt;
        expect(await ledger.claimStart('j1', seen, seen + 10)).toBe(false);
        expect(await ledger.claimStart('nobody', T, T + 10)).toBe(false);
      });

      test('of two concurrent claims with the same seenUpdatedAt exactly one wins', async () => {
        await jobIn('starting');
        const seen = (await ledger.get('j1'))!.updatedAt;
        const results = await Promise.all([ledger.claimStart('j1', seen, seen + 100_000), ledger.claimStart('j1', seen, seen + 100_001)]);
        expect(results.filter(Boolean)).toHaveLength(1);
      });

      // BUG (shared/adapters/dynamodb/jobLedger.ts claimStart, mirrored by the fake): the claim only sets
      // updatedAt = now, so when `now` equals seenUpdatedAt (START_GRACE_SECONDS=0, or two resumers whose clocks give
      // the same millisecond) the write changes nothing and every concurrent claim wins. Fix: make the claim
      // change something every time (e.g. SET updatedAt = :now, claims = claims + 1 and claim on a counter, or use
      // max(now, seenUpdatedAt + 1)).
      test('two concurrent claims in the very millisecond of the last update: exactly one wins', async () => {
        await jobIn('starting');
        const seen = (await ledger.get('j1'))!.updatedAt;
        const results = await Promise.all([ledger.claimStart('j1', seen, seen), ledger.claimStart('j1', seen, seen)]);
        expect(results.filter(Boolean)).toHaveLength(1);
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

      test('a completion noted before its run is recorded is handed to recordRun once, and is not a run', async () => {
        const early = { kind: 'glue' as const, executionId: 'jr_9', outcome: 'failed' as const, name: 'etl--x', detail: 'FAILED: boom' };
        expect(await ledger.noteEarlyCompletion(early, T)).toBe(true);
        expect(await ledger.findRun('glue', 'jr_9')).toBeUndefined();
        // A duplicate event notes it again, harmlessly.
        expect(await ledger.noteEarlyCompletion(early, T + 1)).toBe(true);

        const ref = { kind: 'glue' as const, executionId: 'jr_9', jobId: 'g9', pool: 'etl' };
        expect(await ledger.recordRun(ref, T + 2)).toEqual(early);
        expect(await ledger.findRun('glue', 'jr_9')).toEqual(ref);
        expect(await ledger.recordRun(ref, T + 3)).toBeUndefined();
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

      test('a run is not a job: findRun does not create or change the job record', async () => {
        await ledger.recordRun({ kind: 'appflow', executionId: 'e1', jobId: 'j1', pool: 'default' }, T);
        expect(await ledger.get('j1')).toBeUndefined();
      });
    });

    describe('retention', () => {
      test.each(TERMINAL_STATES.map((s) => [s]))('a job reaching %s gets expiresAt = now (s) + retention', async (terminal) => {
        if (!fixture.expiresAtOf) return;
        // Prepare
        await jobIn('queued');
        expect(await fixture.expiresAtOf('j1')).toBeUndefined();
        // Act
        const moves: Record<string, Array<[JobState, JobState]>> = {
          succeeded: [
            ['queued', 'starting'],
            ['starting', 'running'],
            ['running', 'succeeded'],
          ],
          failed: [
            ['queued', 'starting'],
            ['starting', 'failed'],
          ],
          dead: [
            ['queued', 'waiting'],
            ['waiting', 'dead'],
          ],
        };
        const now = T + 123_456;
        for (const [from, to] of moves[terminal as string]!) expect(await ledger.transition('j1', [from], to, now)).toBe(true);
        // Assess
        expect(await fixture.expiresAtOf('j1')).toBe(Math.floor(now / 1000) + fixture.retentionDays * 86_400);
        expect(await ledger.get('j1')).not.toHaveProperty('expiresAt');
      });

      test('a job that is not finished has no expiresAt', async () => {
        if (!fixture.expiresAtOf) return;
        await jobIn('running');
        expect(await fixture.expiresAtOf('j1')).toBeUndefined();
      });
    });
  });
}
