import { UNLIMITED_COUNTER_LIMIT, uncountedHolderKey, uncountedHolderKeys } from '../../shared/domain/unlimited';
import type { JobState } from '../../shared/domain/jobState';
import { type Demand, keyGate } from '../../shared/domain/limits';
import { MAX_PRIORITY, type Waiter, waitKey } from '../../shared/domain/waiting';
import { type JobLedger, type JobRecord, type Move, type RecordPatch, registeredRecord } from '../../shared/ports/jobLedger';
import {
  AdoptOutcome,
  ClaimOutcome,
  type LeaseStore,
  PassOutcome,
  type Receiver,
  ReserveOutcome,
  TakeOutcome,
} from '../../shared/ports/leaseStore';
import { appflow, expiryOf, type StoreFixture, T } from './jobLedger.contract';
import { receiver, unit } from '../support/demands';
import type { JobKind } from '../../shared/kinds/registry';

export type LeaseStoreFixture = StoreFixture;

function waiter(pool: string, jobId: string, firstSeenAt: number, kind: JobKind = 'glue'): Waiter {
  return {
    pool,
    gate: pool,
    demand: unit(pool),
    jobId,
    kind,
    waitKey: waitKey(firstSeenAt, jobId),
    body: JSON.stringify({ id: jobId, pool, kind, jobName: `job-${jobId}` }),
    since: firstSeenAt,
  };
}

/** A version-fenced move from the record as read. */
const from = (record: JobRecord, to: JobState, patch?: RecordPatch): Move => ({ jobId: record.jobId, version: record.version, to, patch });

/**
 * What every LeaseStore must do, whatever stores it. `setup` gives an empty store (no pools, no jobs: a fresh table,
 * say) before each test, with the JobLedger over the same records; `cleanup` runs after it.
 */
/** The settle time the switch tests give (adoptSettleSeconds): any will do, the callers' clocks are the tests'. */
const SETTLE = 60_000;

export function describeLeaseStoreContract(name: string, setup: () => Promise<LeaseStoreFixture>, timeoutMs = 30_000): void {
  describe(`LeaseStore contract: ${name}`, () => {
    let fixture: LeaseStoreFixture;
    let store: LeaseStore;
    let ledger: JobLedger;

    beforeEach(async () => {
      fixture = await setup();
      store = fixture.leases;
      ledger = fixture.ledger;
    }, timeoutMs);
    afterEach(async () => {
      await fixture?.cleanup?.();
    }, timeoutMs);

    // ---- helpers: jobs in each state, made through the ports ----------------------------------------------------

    const read = async (jobId: string): Promise<JobRecord> => {
      const record = await ledger.get(jobId);
      if (!record) throw new Error(`job ${jobId} is not in the store`);
      return record;
    };

    async function queued(jobId: string, pool = 'p'): Promise<JobRecord> {
      return (await ledger.register(appflow(jobId, pool), T)).record;
    }

    async function waiting(jobId: string, pool = 'p'): Promise<JobRecord> {
      const record = await queued(jobId, pool);
      expect(await ledger.move(from(record, 'waiting'), T + 1)).toBe(true);
      return read(jobId);
    }

    /** Queued, then takes a slot of `pool` and moves to `to` (starting unless told). */
    async function holding(jobId: string, pool = 'p', since = T + 2, to: JobState = 'starting'): Promise<JobRecord> {
      const record = await queued(jobId, pool);
      expect((await store.take(unit(pool), from(record, to, { attempt: `msg-${jobId}` }), since)).outcome).toBe(TakeOutcome.Taken);
      return read(jobId);
    }

    /** Starting, then moved back to queued by a ledger move, which keeps the slot: queued yet holding a lease. */
    async function queuedWithLease(jobId: string, pool = 'p'): Promise<JobRecord> {
      const record = await holding(jobId, pool);
      expect(await ledger.move(from(record, 'queued'), T + 4)).toBe(true);
      return read(jobId);
    }

    async function running(jobId: string, pool = 'p', since = T + 2): Promise<JobRecord> {
      const record = await holding(jobId, pool, since);
      expect(await ledger.move(from(record, 'running', { executionId: `exec-${jobId}`, startedAt: since + 1 }), since + 1)).toBe(true);
      return read(jobId);
    }

    async function reserved(jobId: string, pool = 'p', since = T + 3): Promise<JobRecord> {
      await waiting(jobId, pool);
      expect(await store.reserve(receiver(jobId, pool), since)).toBe(ReserveOutcome.Reserved);
      return read(jobId);
    }

    /** Every holder of the pool, read page by page (small pages, so paging is exercised too). */
    async function allHolders(pool: string): Promise<string[]> {
      const ids: string[] = [];
      let after: string | undefined;
      for (let pages = 0; pages < 100; pages++) {
        const page = await store.holders(pool, { after, max: 2 });
        ids.push(...page.holders.map((holder) => holder.jobId));
        if (page.next === undefined) return ids;
        after = page.next;
      }
      throw new Error('holders never ended');
    }

    /** The pool counter, the holders and the records: what "nothing changed" compares. */
    async function observe(pool: string, jobIds: string[]) {
      return {
        pool: await store.getPool(pool),
        holders: await allHolders(pool),
        records: await Promise.all(jobIds.map((id) => ledger.get(id))),
      };
    }

    /** inUse equals the number of records holding a lease of the pool, and the holders index lists exactly them. */
    async function expectConsistent(pool: string, jobIds: string[]): Promise<void> {
      const records = await Promise.all(jobIds.map((id) => ledger.get(id)));
      const leased = records.filter((r) => r?.lease?.pool === pool).map((r) => r!.jobId);
      expect((await store.getPool(pool))!.inUse).toBe(leased.length);
      expect([...(await allHolders(pool))].sort()).toEqual([...leased].sort());
    }

    // ---- pools --------------------------------------------------------------------------------------------------

    describe('pools', () => {
      test('createPool creates an empty pool once; a second create changes nothing', async () => {
        // Act
        const first = await store.createPool('p', 3);
        const second = await store.createPool('p', 7);
        // Assess
        expect(first).toBe(true);
        expect(second).toBe(false);
        expect(await store.getPool('p')).toEqual({ name: 'p', limit: 3, inUse: 0 });
      });

      test('getPool of an unknown pool is undefined', async () => {
        expect(await store.getPool('nope')).toBeUndefined();
      });

      test('listPools lists pools made by createPool and by setLimit, and nothing else', async () => {
        // Prepare
        expect(await store.listPools()).toEqual([]);
        // Act
        await store.createPool('b-pool', 1);
        await store.setLimit('a-pool', 2);
        await store.addWaiter(waiter('b-pool', 'w1', T));
        await holding('j1', 'b-pool');
        await queued('j2', 'c-pool');
        // Assess
        expect([...(await store.listPools())].sort()).toEqual(['a-pool', 'b-pool']);
      });

      test('setLimit changes the limit and keeps inUse and the leases', async () => {
        // Prepare
        await store.createPool('p', 2);
        const held = await holding('j1');
        // Act
        await store.setLimit('p', 5);
        // Assess
        expect(await store.getPool('p')).toEqual({ name: 'p', limit: 5, inUse: 1 });
        expect(await ledger.get('j1')).toEqual(held);
      });

      test('switchUnlimited: to an unlimited pool and back, once each way; setLimit between keeps the mark', async () => {
        // Prepare: a limited pool with a unit in use; an unlimited pool's counter, marked as it is created
        await store.createPool('p', 2);
        await holding('j1');
        await store.createPool('u', UNLIMITED_COUNTER_LIMIT);
        expect(await store.getPool('u')).toEqual({ name: 'u', limit: UNLIMITED_COUNTER_LIMIT, inUse: 0, unlimited: true });
        // Act, assess: to unlimited, once (room follows: a take of the whole old limit and more fits)
        expect(await store.switchUnlimited('p', 'unlimited', T + 1, SETTLE)).toBe(true);
        expect(await store.switchUnlimited('p', 'unlimited', T + 1, SETTLE)).toBe(false);
        expect(await store.getPool('p')).toEqual({ name: 'p', limit: UNLIMITED_COUNTER_LIMIT, inUse: 1, unlimited: true });
        for (const id of ['j2', 'j3']) await holding(id);
        // The operator's limit between switches is the table's, as any limit's: the mark stays
        await store.setLimit('p', 3);
        expect(await store.getPool('p')).toEqual({ name: 'p', limit: 3, inUse: 3, unlimited: true });
        // Back to limited, once: the configured limit, the mark gone, adopting (room follows: full at 3)
        expect(await store.switchUnlimited('p', 3, T + 2, SETTLE)).toBe(true);
        expect(await store.switchUnlimited('p', 3, T + 2, SETTLE)).toBe(false);
        expect(await store.getPool('p')).toEqual({ name: 'p', limit: 3, inUse: 3, adopting: true, adoptingSince: T + 2 });
        expect(await store.endAdopting('p')).toBe(true);
        expect((await store.take(unit('p'), from(await queued('j4'), 'starting'), T + 3)).outcome).toBe(TakeOutcome.Full);
        // A missing counter is not created
        expect(await store.switchUnlimited('nope', 'unlimited', T + 4, SETTLE)).toBe(false);
        expect(await store.switchUnlimited('nope', 2, T + 4, SETTLE)).toBe(false);
        expect(await store.getPool('nope')).toBeUndefined();
      });

      test("switchUnlimited: a counter at the limit no pool reaches but not marked (as an earlier version made it) is an unlimited pool's", async () => {
        // Prepare: created limited, then given the unlimited limit without the mark
        await store.createPool('legacy', 2);
        await store.setLimit('legacy', UNLIMITED_COUNTER_LIMIT);
        // Assess: read as an unlimited pool's; not switched to one again; switched back once
        expect(await store.getPool('legacy')).toEqual({ name: 'legacy', limit: UNLIMITED_COUNTER_LIMIT, inUse: 0, unlimited: true });
        expect(await store.switchUnlimited('legacy', 'unlimited', T, SETTLE)).toBe(false);
        expect(await store.switchUnlimited('legacy', 4, T, SETTLE)).toBe(true);
        expect(await store.getPool('legacy')).toEqual({ name: 'legacy', limit: 4, inUse: 0, adopting: true, adoptingSince: T });
        expect(await store.switchUnlimited('legacy', 4, T, SETTLE)).toBe(false);
      });

      test('setLimit creates a missing pool, empty, and a slot can be taken at once', async () => {
        // Act
        await store.setLimit('fresh', 1);
        // Assess
        expect(await store.getPool('fresh')).toEqual({ name: 'fresh', limit: 1, inUse: 0 });
        expect(await store.listPools()).toContain('fresh');
        const record = await queued('j1', 'fresh');
        expect((await store.take(unit('fresh'), from(record, 'starting'), T + 1)).outcome).toBe(TakeOutcome.Taken);
      });

      test('lowering the limit below inUse never takes a lease away; new takes are Full', async () => {
        // Prepare
        await store.createPool('p', 3);
        const held = [await holding('j1'), await holding('j2'), await holding('j3')];
        // Act
        await store.setLimit('p', 1);
        // Assess
        expect(await store.getPool('p')).toEqual({ name: 'p', limit: 1, inUse: 3 });
        for (const record of held) expect(await ledger.get(record.jobId)).toEqual(record);
        expect(await allHolders('p')).toEqual(['j1', 'j2', 'j3']);
        const late = await queued('j4');
        expect((await store.take(unit('p'), from(late, 'starting'), T + 9)).outcome).toBe(TakeOutcome.Full);
      });
    });

    // ---- holders ------------------------------------------------------------------------------------------------

    describe('holders', () => {
      test('a pool with no holders (or no pool at all) gives an empty page and no next', async () => {
        await store.createPool('p', 2);
        await queued('j1');
        expect(await store.holders('p')).toEqual({ holders: [] });
        expect(await store.holders('ghost', { max: 2 })).toEqual({ holders: [] });
      });

      test('pages of `max`, each starting after the last one: 5 holders in pages of 2, 2 and 1', async () => {
        // Prepare: taken in another order than their ids
        await store.createPool('p', 10);
        for (const [i, id] of ['j3', 'j1', 'j5', 'j2', 'j4'].entries()) await holding(id, 'p', T + 10 + i);
        const view = (jobId: string, i: number) => ({ jobId, kind: 'appflow', since: T + 10 + i });
        // Act
        const first = await store.holders('p', { max: 2 });
        const second = await store.holders('p', { max: 2, after: first.next });
        const third = await store.holders('p', { max: 2, after: second.next });
        // Assess
        expect(first).toEqual({ holders: [view('j1', 1), view('j2', 3)], next: 'j2' });
        expect(second).toEqual({ holders: [view('j3', 0), view('j4', 4)], next: 'j4' });
        expect(third).toEqual({ holders: [view('j5', 2)] });
      });

      test('without options, every holder in one page', async () => {
        await store.createPool('p', 10);
        for (const id of ['j3', 'j1', 'j2']) await holding(id);
        expect((await store.holders('p')).holders.map((holder) => holder.jobId)).toEqual(['j1', 'j2', 'j3']);
        expect((await store.holders('p')).next).toBeUndefined();
      });

      test('only jobs holding a lease of this pool: not other pools, not jobs without a slot', async () => {
        // Prepare
        await store.createPool('p', 5);
        await store.createPool('q', 5);
        await holding('a');
        await holding('b', 'q');
        await queued('c');
        await waiting('d');
        await reserved('e');
        await running('f');
        // Assess
        expect(await allHolders('p')).toEqual(['a', 'e', 'f']);
        expect(await allHolders('q')).toEqual(['b']);
      });

      test('a freed holder disappears; a slot passed on moves to its new holder', async () => {
        // Prepare
        await store.createPool('p', 3);
        const a = await running('a');
        const b = await running('b');
        await waiting('w');
        // Act
        expect(await store.free(unit('p'), from(a, 'succeeded'), T + 10)).toBe(true);
        expect(await store.pass(unit('p'), from(b, 'failed'), receiver('w', 'p'), T + 11)).toBe(PassOutcome.Passed);
        // Assess
        expect(await allHolders('p')).toEqual(['w']);
        expect(await store.holders('p')).toEqual({ holders: [{ jobId: 'w', kind: 'appflow', since: T + 11 }] });
      });
    });

    // ---- take ---------------------------------------------------------------------------------------------------

    describe('take', () => {
      test('Taken: the job moves (version + 1, patch set) and holds a lease since now; inUse + 1', async () => {
        // Prepare
        await store.createPool('p', 2);
        const record = await queued('j1');
        // Act
        const outcome = (
          await store.take(unit('p'), from(record, 'starting', { attempt: 'msg-1', attempts: 1, lastError: undefined }), T + 5)
        ).outcome;
        // Assess
        expect(outcome).toBe(TakeOutcome.Taken);
        expect(await store.getPool('p')).toEqual({ name: 'p', limit: 2, inUse: 1 });
        const after = await read('j1');
        expect(after).toEqual({
          ...record,
          state: 'starting',
          version: record.version + 1,
          updatedAt: T + 5,
          attempt: 'msg-1',
          attempts: 1,
          lease: { pool: 'p', since: T + 5 },
        });
        expect(after).not.toHaveProperty('lastError');
      });

      test('takes up to the limit, then Full; Full changes nothing', async () => {
        // Prepare
        await store.createPool('p', 2);
        await holding('j1');
        await holding('j2');
        const late = await queued('j3');
        const before = await observe('p', ['j1', 'j2', 'j3']);
        // Act
        const outcome = (await store.take(unit('p'), from(late, 'starting'), T + 9)).outcome;
        // Assess
        expect(outcome).toBe(TakeOutcome.Full);
        expect(await observe('p', ['j1', 'j2', 'j3'])).toEqual(before);
        expect(before.pool).toEqual({ name: 'p', limit: 2, inUse: 2 });
      });

      test("Full and NoPool of a one-gate demand say what the failed write saw of the gate's counter", async () => {
        await store.createPool('p', 1);
        await holding('a');
        const late = await queued('b');
        const full = await store.take(unit('p'), from(late, 'starting'), T + 9);
        expect(full).toEqual({ outcome: TakeOutcome.Full, seen: { counter: { name: 'p', limit: 1, inUse: 1 } } });
        const lost = await queued('c', 'ghost');
        expect(await store.take(unit('ghost'), from(lost, 'starting'), T + 9)).toEqual({
          outcome: TakeOutcome.NoPool,
          seen: { counter: undefined },
        });
      });

      test('a pool with limit 0 is paused: take is Full', async () => {
        await store.createPool('paused', 0);
        const record = await queued('j1', 'paused');
        expect((await store.take(unit('paused'), from(record, 'starting'), T + 1)).outcome).toBe(TakeOutcome.Full);
        expect(await store.getPool('paused')).toEqual({ name: 'paused', limit: 0, inUse: 0 });
        expect(await ledger.get('j1')).toEqual(record);
      });

      test('NoPool: the pool does not exist; nothing is created and the record is unchanged', async () => {
        const record = await queued('j1', 'ghost');
        expect((await store.take(unit('ghost'), from(record, 'starting'), T + 1)).outcome).toBe(TakeOutcome.NoPool);
        expect(await store.getPool('ghost')).toBeUndefined();
        expect(await store.listPools()).toEqual([]);
        expect(await ledger.get('j1')).toEqual(record);
      });

      test('Stale: the record changed since it was read; nothing changes', async () => {
        // Prepare
        await store.createPool('p', 2);
        const read1 = await queued('j1');
        expect(await ledger.move(from(read1, 'waiting'), T + 1)).toBe(true);
        const before = await observe('p', ['j1']);
        // Act
        const outcome = (await store.take(unit('p'), from(read1, 'starting'), T + 2)).outcome;
        // Assess
        expect(outcome).toBe(TakeOutcome.Stale);
        expect(await observe('p', ['j1'])).toEqual(before);
        expect(before.pool!.inUse).toBe(0);
      });

      test('Stale: the job already holds a lease (of this pool or another); nothing changes', async () => {
        // Prepare
        await store.createPool('p', 3);
        await store.createPool('q', 3);
        const inP = await holding('a');
        const inQ = await holding('b', 'q');
        const before = { p: await observe('p', ['a', 'b']), q: await observe('q', ['a', 'b']) };
        // Act
        const again = (await store.take(unit('p'), from(inP, 'starting'), T + 9)).outcome;
        const other = (await store.take(unit('p'), from(inQ, 'starting'), T + 9)).outcome;
        // Assess
        expect([again, other]).toEqual([TakeOutcome.Stale, TakeOutcome.Stale]);
        expect({ p: await observe('p', ['a', 'b']), q: await observe('q', ['a', 'b']) }).toEqual(before);
      });

      test('Stale: an unknown job; no record is created and the counter is unchanged', async () => {
        await store.createPool('p', 1);
        expect((await store.take(unit('p'), { jobId: 'nobody', version: 1, to: 'starting' }, T)).outcome).toBe(TakeOutcome.Stale);
        expect(await ledger.get('nobody')).toBeUndefined();
        expect(await store.getPool('p')).toEqual({ name: 'p', limit: 1, inUse: 0 });
      });

      describe('creating the record (a first delivery: register and take as one write)', () => {
        const fresh = (jobId: string, pool = 'p'): JobRecord => registeredRecord(appflow(jobId, pool), T);

        test('Taken: the record is created already moved (version 2, patch set, lease since now); inUse + 1', async () => {
          await store.createPool('p', 2);
          const record = fresh('j1');
          const outcome = (await store.take(unit('p'), from(record, 'starting', { attempt: 'msg-1' }), T + 5, record)).outcome;
          expect(outcome).toBe(TakeOutcome.Taken);
          expect(await store.getPool('p')).toEqual({ name: 'p', limit: 2, inUse: 1 });
          expect(await read('j1')).toEqual({
            ...record,
            state: 'starting',
            version: 2,
            updatedAt: T + 5,
            attempt: 'msg-1',
            lease: { pool: 'p', since: T + 5 },
          });
          expect((await store.holders('p')).holders.map((h) => h.jobId)).toEqual(['j1']);
        });

        test('Stale when the job has a record already (another delivery registered it): nothing changes', async () => {
          await store.createPool('p', 2);
          const stored = await queued('j1');
          const before = await observe('p', ['j1']);
          const outcome = (await store.take(unit('p'), from(fresh('j1'), 'starting'), T + 5, fresh('j1'))).outcome;
          expect(outcome).toBe(TakeOutcome.Stale);
          expect(await observe('p', ['j1'])).toEqual(before);
          expect(await read('j1')).toEqual(stored);
        });

        test('Full and NoPool create nothing: the job is still unknown', async () => {
          await store.createPool('p', 1);
          await holding('a');
          expect((await store.take(unit('p'), from(fresh('b'), 'starting'), T + 5, fresh('b'))).outcome).toBe(TakeOutcome.Full);
          expect((await store.take(unit('ghost'), from(fresh('c', 'ghost'), 'starting'), T + 5, fresh('c', 'ghost'))).outcome).toBe(
            TakeOutcome.NoPool,
          );
          expect([await ledger.get('b'), await ledger.get('c')]).toEqual([undefined, undefined]);
          expect(await store.getPool('p')).toEqual({ name: 'p', limit: 1, inUse: 1 });
        });
      });

      test('a stale read on a full pool is Stale, not Full: the caller reads again before parking', async () => {
        await store.createPool('p', 1);
        await holding('a');
        const stale = await queued('b');
        expect(await ledger.move(from(stale, 'waiting'), T + 1)).toBe(true);
        const before = await observe('p', ['a', 'b']);
        expect((await store.take(unit('p'), from(stale, 'starting'), T + 2)).outcome).toBe(TakeOutcome.Stale);
        expect(await observe('p', ['a', 'b'])).toEqual(before);
      });
    });

    // ---- uncounted slots (an unlimited pool's job with no start rate and no keyed limit) ---------------------------

    describe('uncounted slots', () => {
      const uncounted = (pool = 'u'): Demand => ({ ...unit(pool), uncounted: true });

      test('take: the record only (no pool, no counter, no registry entry), marked uncounted and listed as a holder', async () => {
        const record = await queued('j1', 'u');
        const outcome = await store.take(uncounted(), from(record, 'starting', { attempt: 'msg-1' }), T + 5);
        expect(outcome).toEqual({ outcome: TakeOutcome.Taken });
        expect(await read('j1')).toEqual({
          ...record,
          state: 'starting',
          version: record.version + 1,
          updatedAt: T + 5,
          attempt: 'msg-1',
          lease: { pool: 'u', since: T + 5, uncounted: true },
        });
        expect(await store.getPool('u')).toBeUndefined();
        expect(await store.listPools()).toEqual([]);
        // Listed as a holder under its shard of the pool, not under the pool's own key (every other job's).
        expect(await allHolders(uncountedHolderKey('u', 'j1'))).toEqual(['j1']);
        expect(await allHolders('u')).toEqual([]);
      });

      test('take marks its pool as one with uncounted slots (a counted take does not); marks are idempotent and kept', async () => {
        expect(await store.uncountedPools()).toEqual([]);
        await store.createPool('p', 5);
        await holding('c1', 'p');
        const record = await queued('j1', 'u');
        expect((await store.take(uncounted(), from(record, 'starting'), T + 5)).outcome).toBe(TakeOutcome.Taken);
        expect(await store.uncountedPools()).toEqual(['u']);
        await store.markUncounted('u');
        await store.markUncounted('v');
        expect((await store.uncountedPools()).sort()).toEqual(['u', 'v']);
        // Not a gate: neither listed as one nor given a counter.
        expect(await store.listPools()).toEqual(['p']);
        expect(await store.getPool('v')).toBeUndefined();
      });

      test('take creating the record (a first delivery): created already moved; Stale if the job has a record', async () => {
        const record = registeredRecord(appflow('j1', 'u'), T);
        expect((await store.take(uncounted(), from(record, 'starting', { attempt: 'msg-1' }), T + 5, record)).outcome).toBe(
          TakeOutcome.Taken,
        );
        expect(await read('j1')).toMatchObject({ state: 'starting', version: 2, lease: { pool: 'u', since: T + 5, uncounted: true } });
        const before = await read('j1');
        expect((await store.take(uncounted(), from(record, 'starting', { attempt: 'msg-2' }), T + 6, record)).outcome).toBe(
          TakeOutcome.Stale,
        );
        expect(await read('j1')).toEqual(before);
      });

      test('take is fenced: a stale version, or a job holding a slot already, is Stale and changes nothing', async () => {
        const current = await queued('j1', 'u');
        expect((await store.take(uncounted(), { ...from(current, 'starting'), version: current.version + 1 }, T + 5)).outcome).toBe(
          TakeOutcome.Stale,
        );
        expect(await read('j1')).toEqual(current);
        expect((await store.take(uncounted(), from(current, 'starting'), T + 6)).outcome).toBe(TakeOutcome.Taken);
        const held = await read('j1');
        expect(await ledger.move(from(held, 'queued'), T + 7)).toBe(true);
        const queuedHolding = await read('j1');
        expect((await store.take(uncounted(), from(queuedHolding, 'starting'), T + 8)).outcome).toBe(TakeOutcome.Stale);
        expect(await read('j1')).toEqual(queuedHolding);
      });

      test('free: the record only, fenced; a counted free of an uncounted slot, or the reverse, frees nothing', async () => {
        await store.createPool('u', 5);
        await store.createPool('p', 5);
        const record = await queued('j1', 'u');
        expect((await store.take(uncounted(), from(record, 'starting'), T + 5)).outcome).toBe(TakeOutcome.Taken);
        const held = await read('j1');
        const counted = await holding('c1', 'p');
        // The wrong kind of release, either way: nothing moves (a counter given a unit it never had, or one never given back).
        expect(await store.free(unit('u'), from(held, 'succeeded'), T + 9)).toBe(false);
        expect(await store.free(uncounted('p'), from(counted, 'succeeded'), T + 9)).toBe(false);
        expect(await store.getPool('u')).toMatchObject({ inUse: 0 });
        expect(await store.getPool('p')).toMatchObject({ inUse: 1 });
        // A stale version frees nothing; the version read frees the record only.
        expect(await store.free(uncounted(), { ...from(held, 'succeeded'), version: held.version - 1 }, T + 9)).toBe(false);
        expect(await store.free(uncounted(), from(held, 'succeeded', { endedAt: T + 10 }), T + 10)).toBe(true);
        const { lease: _lease, ...rest } = held;
        expect(await read('j1')).toEqual({ ...rest, state: 'succeeded', version: held.version + 1, updatedAt: T + 10, endedAt: T + 10 });
        expect(await fixture.expiresAtOf('j1')).toBe(expiryOf(T + 10, fixture.retentionDays));
        expect(await store.getPool('u')).toMatchObject({ inUse: 0 });
        expect(await allHolders(uncountedHolderKey('u', 'j1'))).toEqual([]);
      });

      test('a hotspot spreads over the shards: 64 uncounted holders of one pool, listed by shard, each once', async () => {
        for (let i = 0; i < 64; i++) {
          const record = await queued(`h${i}`, 'u');
          expect((await store.take(uncounted(), from(record, 'starting'), T + 5)).outcome).toBe(TakeOutcome.Taken);
        }
        const byShard = await Promise.all(uncountedHolderKeys('u').map((key) => allHolders(key)));
        expect(byShard.flat().sort()).toEqual(Array.from({ length: 64 }, (_, i) => `h${i}`).sort());
        expect(Math.max(...byShard.map((shard) => shard.length))).toBeLessThan(16);
      });

      test('a refused start gives the uncounted slot back and queues the job again (no expiresAt)', async () => {
        const record = await queued('j1', 'u');
        expect((await store.take(uncounted(), from(record, 'starting'), T + 5)).outcome).toBe(TakeOutcome.Taken);
        const held = await read('j1');
        expect(await store.free(uncounted(), from(held, 'queued', { lastError: 'refused' }), T + 9)).toBe(true);
        expect(await read('j1')).toMatchObject({ state: 'queued', lastError: 'refused', version: held.version + 1 });
        expect(await read('j1')).not.toHaveProperty('lease');
        expect(await fixture.expiresAtOf('j1')).toBeUndefined();
        // ...and takes again, counted now if configuration says so.
        await store.createPool('u', 1);
        expect((await store.take(unit('u'), from(await read('j1'), 'starting'), T + 10)).outcome).toBe(TakeOutcome.Taken);
        expect(await read('j1')).toMatchObject({ lease: { pool: 'u', since: T + 10 } });
        expect((await read('j1')).lease).not.toHaveProperty('uncounted');
        expect(await store.getPool('u')).toMatchObject({ inUse: 1 });
      });
    });

    // ---- a pool limited again: its counter adopts the uncounted slots -------------------------------------------

    describe('a pool limited again (adopting)', () => {
      const uncounted = (pool = 'u'): Demand => ({ ...unit(pool), uncounted: true });
      /** A job of a pool the configuration gives a limit (configuredDemand). */
      const limited = (pool = 'u', keys: string[] = []): Demand => ({ ...unit(pool), keys, limited: true });

      test("take: a limited pool's job is refused on a counter still an unlimited pool's (Full, the counter seen, nothing written); an unlimited pool's counted job is not", async () => {
        // Prepare: an unlimited pool's counter (marked), and one an earlier version made (the limit, no mark)
        await store.createPool('u', UNLIMITED_COUNTER_LIMIT);
        await store.createPool('legacy', 1);
        await store.setLimit('legacy', UNLIMITED_COUNTER_LIMIT);
        await store.createPool('key/org:a', 5);
        const a = await queued('a', 'u');
        const b = await queued('b', 'legacy');
        const before = await observe('u', ['a']);
        // Act, assess: refused, as Full on the pool, with the counter as the write saw it
        expect(await store.take(limited(), from(a, 'starting'), T + 5)).toEqual({
          outcome: TakeOutcome.Full,
          seen: { counter: { name: 'u', limit: UNLIMITED_COUNTER_LIMIT, inUse: 0, unlimited: true } },
        });
        expect((await store.take(limited('legacy'), from(b, 'starting'), T + 5)).outcome).toBe(TakeOutcome.Full);
        expect((await store.take(limited('u', ['org:a']), from(a, 'starting'), T + 5)).outcome).toBe(TakeOutcome.Full);
        expect(await observe('u', ['a'])).toEqual(before);
        expect(await store.getPool('key/org:a')).toMatchObject({ inUse: 0 });
        // The same job of an unlimited pool (its rated or keyed jobs take the counter) is admitted
        expect((await store.take(unit('u'), from(a, 'starting'), T + 6)).outcome).toBe(TakeOutcome.Taken);
        expect(await store.getPool('u')).toMatchObject({ inUse: 1, unlimited: true });
      });

      test("pass, reserve and claim: a limited pool's receiver is refused on a counter still an unlimited pool's; nothing written", async () => {
        // Prepare: an unlimited pool's counter with a holder, a reservation and a waiting job (its rated or keyed jobs')
        await store.createPool('u', UNLIMITED_COUNTER_LIMIT);
        await holding('h', 'u');
        await reserved('r', 'u');
        await waiting('w', 'u');
        const before = await observe('u', ['h', 'r', 'w']);
        const limitedReceiver = { ...receiver('w', 'u'), demand: limited() };
        // Act, assess
        expect(await store.reserve(limitedReceiver, T + 6)).toBe(ReserveOutcome.Full);
        expect(await store.pass(unit('u'), from(await read('h'), 'succeeded'), limitedReceiver, T + 6)).toBe(PassOutcome.OverLimit);
        expect(await store.claim(limited(), from(await read('r'), 'starting'), T + 6)).toBe(ClaimOutcome.OverLimit);
        expect(await observe('u', ['h', 'r', 'w'])).toEqual(before);
        // An unlimited pool's receiver is let in as before
        expect(await store.claim(unit('u'), from(await read('r'), 'starting'), T + 7)).toBe(ClaimOutcome.Claimed);
        expect(await store.pass(unit('u'), from(await read('h'), 'succeeded'), receiver('w', 'u'), T + 7)).toBe(PassOutcome.Passed);
      });

      test('switched to a limit: adopting, it admits no job (take, pass, reserve, claim) until endAdopting; a reservation is taken back as over its limit', async () => {
        // Prepare: an unlimited pool's counter with a counted holder and a reservation (its rated or keyed jobs')
        await store.createPool('u', UNLIMITED_COUNTER_LIMIT);
        await holding('h', 'u');
        await reserved('r', 'u');
        const q = await queued('q', 'u');
        await waiting('w', 'u');
        // Act: the switch to a limit
        expect(await store.switchUnlimited('u', 5, T + 5, SETTLE)).toBe(true);
        expect(await store.getPool('u')).toEqual({ name: 'u', limit: 5, inUse: 2, adopting: true, adoptingSince: T + 5 });
        // Assess: every admission refused, with room to spare, whatever the configuration the caller knows
        expect((await store.take(unit('u'), from(q, 'starting'), T + 6)).outcome).toBe(TakeOutcome.Full);
        expect((await store.take(limited(), from(q, 'starting'), T + 6)).outcome).toBe(TakeOutcome.Full);
        expect(await store.reserve(receiver('w', 'u'), T + 6)).toBe(ReserveOutcome.Full);
        expect(await store.pass(unit('u'), from(await read('h'), 'succeeded'), receiver('w', 'u'), T + 7)).toBe(PassOutcome.OverLimit);
        expect(await store.claim(limited(), from(await read('r'), 'starting'), T + 7)).toBe(ClaimOutcome.OverLimit);
        expect(await store.claim(unit('u'), from(await read('r'), 'starting'), T + 7)).toBe(ClaimOutcome.OverLimit);
        expect(await observe('u', ['h', 'r', 'q', 'w'])).toMatchObject({ pool: { inUse: 2 }, holders: ['h', 'r'] });
        expect(await read('w')).toMatchObject({ state: 'waiting' });
        // The reservation is taken back (freeOverLimit: adopting is over its limit); a release is never refused
        expect(await store.freeOverLimit(unit('u'), 'u', from(await read('r'), 'waiting'), T + 8)).toBe(true);
        expect(await store.free(unit('u'), from(await read('h'), 'succeeded'), T + 8)).toBe(true);
        expect(await store.getPool('u')).toEqual({ name: 'u', limit: 5, inUse: 0, adopting: true, adoptingSince: T + 5 });
        // Once: it admits again
        expect(await store.endAdopting('u')).toBe(true);
        expect(await store.endAdopting('u')).toBe(false);
        expect(await store.getPool('u')).toEqual({ name: 'u', limit: 5, inUse: 0 });
        expect((await store.take(limited(), from(await read('q'), 'starting'), T + 9)).outcome).toBe(TakeOutcome.Taken);
        expect(await store.reserve(receiver('w', 'u'), T + 9)).toBe(ReserveOutcome.Reserved);
      });

      test('switched back to unlimited while adopting: refused until the adoption has settled, then the adopting mark goes with the limit; a counter may be created adopting', async () => {
        await store.createPool('u', UNLIMITED_COUNTER_LIMIT);
        expect(await store.switchUnlimited('u', 2, T, SETTLE)).toBe(true);
        // A caller still on the configuration before the deploy (the pool unlimited) cannot undo the switch: nothing written
        expect(await store.switchUnlimited('u', 'unlimited', T + SETTLE - 1, SETTLE)).toBe(false);
        expect(await store.getPool('u')).toEqual({ name: 'u', limit: 2, inUse: 0, adopting: true, adoptingSince: T });
        expect(await store.switchUnlimited('u', 'unlimited', T + SETTLE, SETTLE)).toBe(true);
        expect(await store.getPool('u')).toEqual({ name: 'u', limit: UNLIMITED_COUNTER_LIMIT, inUse: 0, unlimited: true });
        expect(await store.endAdopting('u')).toBe(false);
        // Limited again later: adopting since that switch, not the first
        expect(await store.switchUnlimited('u', 2, T + 2 * SETTLE, SETTLE)).toBe(true);
        expect(await store.getPool('u')).toEqual({ name: 'u', limit: 2, inUse: 0, adopting: true, adoptingSince: T + 2 * SETTLE });
        // Ended only as the adoption the caller judged done: not one a later switch began
        expect(await store.endAdopting('u', T)).toBe(false);
        expect(await store.getPool('u')).toMatchObject({ adopting: true });
        expect(await store.endAdopting('u', T + 2 * SETTLE)).toBe(true);
        expect(await store.getPool('u')).toEqual({ name: 'u', limit: 2, inUse: 0 });
        // Created adopting (a pool limited again that took uncounted slots before any counter existed), since then
        expect(await store.createPool('c', 2, undefined, T + 3)).toBe(true);
        expect(await store.getPool('c')).toEqual({ name: 'c', limit: 2, inUse: 0, adopting: true, adoptingSince: T + 3 });
        const q = await queued('q', 'c');
        expect((await store.take(limited('c'), from(q, 'starting'), T + 5)).outcome).toBe(TakeOutcome.Full);
        // Neither a counter never adopting nor a missing one changes
        await store.createPool('p', 2);
        expect(await store.endAdopting('p')).toBe(false);
        expect(await store.endAdopting('nope')).toBe(false);
        expect(await store.getPool('p')).toEqual({ name: 'p', limit: 2, inUse: 0 });
        expect(await store.getPool('nope')).toBeUndefined();
      });

      test('adopt: the uncounted slot becomes a counted one of its pool and the counter takes its units, even over the limit; once', async () => {
        // Prepare: two jobs holding uncounted slots, then the pool limited again (2)
        await store.createPool('u', UNLIMITED_COUNTER_LIMIT);
        for (const id of ['j1', 'j2', 'j3']) {
          const record = await queued(id, 'u');
          expect((await store.take(uncounted(), from(record, 'starting', { attempt: `msg-${id}` }), T + 5)).outcome).toBe(
            TakeOutcome.Taken,
          );
        }
        expect(await store.switchUnlimited('u', 2, T + 6, SETTLE)).toBe(true);
        const before = await read('j1');
        // Act
        expect(await store.adopt('u', 'j1', 1)).toBe(AdoptOutcome.Adopted);
        expect(await store.adopt('u', 'j2', 2)).toBe(AdoptOutcome.Adopted);
        // Assess: counted (no room condition: 3 units on a limit of 2), the record's state and version as they were
        expect(await store.getPool('u')).toEqual({ name: 'u', limit: 2, inUse: 3, adopting: true, adoptingSince: T + 6 });
        const after = await read('j1');
        expect(after).toEqual({ ...before, lease: { pool: 'u', since: T + 5 } });
        expect(after.lease).not.toHaveProperty('uncounted');
        expect(await allHolders('u')).toEqual(['j1', 'j2']);
        expect(await allHolders(uncountedHolderKey('u', 'j1'))).toEqual([]);
        expect(await allHolders(uncountedHolderKey('u', 'j3'))).toEqual(['j3']);
        // A second adopt of the same slot changes nothing; nor does one of a job holding no slot
        expect(await store.adopt('u', 'j1', 1)).toBe(AdoptOutcome.NotHeld);
        await queued('free', 'u');
        expect(await store.adopt('u', 'free', 1)).toBe(AdoptOutcome.NotHeld);
        expect(await store.getPool('u')).toMatchObject({ inUse: 3 });
        // Given back as counted now: an uncounted release of it frees nothing, a counted one gives its units back
        expect(await store.free(uncounted(), from(after, 'succeeded'), T + 9)).toBe(false);
        expect(await store.free(unit('u'), from(after, 'succeeded'), T + 9)).toBe(true);
        expect(await store.getPool('u')).toMatchObject({ inUse: 2 });
        // An uncounted slot given back before it was adopted is simply gone: nothing to adopt
        expect(await store.free(uncounted(), from(await read('j3'), 'succeeded'), T + 9)).toBe(true);
        expect(await store.adopt('u', 'j3', 1)).toBe(AdoptOutcome.NotHeld);
        expect(await store.getPool('u')).toMatchObject({ inUse: 2 });
      });

      test('adopt: no counter for the pool is NoPool, and nothing is written', async () => {
        const record = await queued('j1', 'v');
        expect((await store.take(uncounted('v'), from(record, 'starting'), T + 5)).outcome).toBe(TakeOutcome.Taken);
        const held = await read('j1');
        expect(await store.adopt('v', 'j1', 1)).toBe(AdoptOutcome.NoPool);
        expect(await read('j1')).toEqual(held);
        expect(await store.getPool('v')).toBeUndefined();
      });
    });

    // ---- free and freeOverLimit ---------------------------------------------------------------------------------

    describe('free', () => {
      test('frees the slot: the job moves (version + 1, patch set) without its lease; inUse - 1', async () => {
        // Prepare
        await store.createPool('p', 2);
        const record = await running('j1');
        await holding('j2');
        // Act
        const freed = await store.free(unit('p'), from(record, 'succeeded', { endedAt: T + 50 }), T + 50);
        // Assess
        expect(freed).toBe(true);
        expect(await store.getPool('p')).toEqual({ name: 'p', limit: 2, inUse: 1 });
        const { lease: _lease, ...rest } = record;
        expect(await ledger.get('j1')).toEqual({
          ...rest,
          state: 'succeeded',
          version: record.version + 1,
          updatedAt: T + 50,
          endedAt: T + 50,
        });
        expect(await fixture.expiresAtOf('j1')).toBe(expiryOf(T + 50, fixture.retentionDays));
        expect(await allHolders('p')).toEqual(['j2']);
      });

      test('a refused start frees the slot and queues the job again (no expiresAt)', async () => {
        await store.createPool('p', 1);
        const record = await holding('j1');
        expect(await store.free(unit('p'), from(record, 'queued', { lastError: 'refused' }), T + 9)).toBe(true);
        expect(await read('j1')).toMatchObject({ state: 'queued', lastError: 'refused', version: record.version + 1 });
        expect(await read('j1')).not.toHaveProperty('lease');
        expect(await fixture.expiresAtOf('j1')).toBeUndefined();
        expect(await store.getPool('p')).toMatchObject({ inUse: 0 });
      });

      test('a stale version returns false and changes nothing (a second free of one read too)', async () => {
        await store.createPool('p', 2);
        const record = await holding('j1');
        expect(await ledger.move(from(record, 'starting', { lastError: 'noted' }), T + 9)).toBe(true);
        const before = await observe('p', ['j1']);
        expect(await store.free(unit('p'), from(record, 'succeeded'), T + 10)).toBe(false);
        expect(await observe('p', ['j1'])).toEqual(before);

        const current = await read('j1');
        expect(await store.free(unit('p'), from(current, 'succeeded'), T + 11)).toBe(true);
        const after = await observe('p', ['j1']);
        expect(await store.free(unit('p'), from(current, 'succeeded'), T + 12)).toBe(false);
        expect(await observe('p', ['j1'])).toEqual(after);
      });

      test('a job that holds no slot, or a slot of another pool, frees nothing', async () => {
        // Prepare
        await store.createPool('p', 2);
        await store.createPool('q', 2);
        await holding('a');
        const free = await queued('b');
        const inQ = await holding('c', 'q');
        const before = { p: await observe('p', ['a', 'b', 'c']), q: await observe('q', ['a', 'b', 'c']) };
        // Act
        const results = [
          await store.free(unit('p'), from(free, 'dead'), T + 9),
          await store.free(unit('p'), from(inQ, 'succeeded'), T + 9),
        ];
        // Assess
        expect(results).toEqual([false, false]);
        expect({ p: await observe('p', ['a', 'b', 'c']), q: await observe('q', ['a', 'b', 'c']) }).toEqual(before);
      });

      test('on a pool that does not exist: false, nothing created', async () => {
        await store.createPool('p', 1);
        const record = await holding('j1');
        expect(await store.free(unit('ghost'), from(record, 'succeeded'), T + 9)).toBe(false);
        expect(await store.getPool('ghost')).toBeUndefined();
        expect(await ledger.get('j1')).toEqual(record);
      });

      test('a freed slot can be taken again', async () => {
        await store.createPool('p', 1);
        const a = await running('a');
        expect(await store.free(unit('p'), from(a, 'succeeded'), T + 10)).toBe(true);
        const b = await queued('b');
        expect((await store.take(unit('p'), from(b, 'starting'), T + 11)).outcome).toBe(TakeOutcome.Taken);
        await expectConsistent('p', ['a', 'b']);
      });
    });

    describe('freeOverLimit', () => {
      test('false while the pool is within its limit (inUse = limit); nothing changes', async () => {
        await store.createPool('p', 2);
        const r = await reserved('r');
        await holding('a');
        const before = await observe('p', ['r', 'a']);
        expect(await store.freeOverLimit(unit('p'), 'p', from(r, 'waiting'), T + 9)).toBe(false);
        expect(await observe('p', ['r', 'a'])).toEqual(before);
      });

      test('over a lowered limit: takes the reservation back (reserved -> waiting, no lease), inUse - 1, only down to the limit', async () => {
        // Prepare
        await store.createPool('p', 3);
        await holding('a');
        const r1 = await reserved('r1');
        const r2 = await reserved('r2');
        await store.setLimit('p', 1);
        // Act
        const first = await store.freeOverLimit(unit('p'), 'p', from(r1, 'waiting'), T + 10);
        const second = await store.freeOverLimit(unit('p'), 'p', from(r2, 'waiting'), T + 11);
        const before = await observe('p', ['a', 'r1', 'r2']);
        const third = await store.freeOverLimit(unit('p'), 'p', from(await read('a'), 'queued'), T + 12);
        // Assess
        expect([first, second, third]).toEqual([true, true, false]);
        expect(await observe('p', ['a', 'r1', 'r2'])).toEqual(before);
        expect(before.pool).toEqual({ name: 'p', limit: 1, inUse: 1 });
        const back = await read('r1');
        expect(back).toMatchObject({ state: 'waiting', version: r1.version + 1, updatedAt: T + 10 });
        expect(back).not.toHaveProperty('lease');
        expect(before.holders).toEqual(['a']);
      });

      test('a stale version returns false and changes nothing, even over the limit', async () => {
        await store.createPool('p', 2);
        await holding('a');
        const r = await reserved('r');
        await store.setLimit('p', 1);
        expect(await store.claim(unit('p'), from(r, 'starting'), T + 5)).toBe(ClaimOutcome.OverLimit);
        const before = await observe('p', ['a', 'r']);
        expect(await store.freeOverLimit(unit('p'), 'p', { ...from(r, 'waiting'), version: r.version - 1 }, T + 7)).toBe(false);
        expect(await store.freeOverLimit(unit('p'), 'p', { ...from(r, 'waiting'), version: r.version + 1 }, T + 7)).toBe(false);
        expect(await observe('p', ['a', 'r'])).toEqual(before);
      });

      test('a job without a lease of the pool frees nothing, even over the limit', async () => {
        await store.createPool('p', 2);
        await holding('a');
        await holding('b');
        await store.setLimit('p', 1);
        const w = await waiting('w');
        const before = await observe('p', ['a', 'b', 'w']);
        expect(await store.freeOverLimit(unit('p'), 'p', from(w, 'waiting'), T + 9)).toBe(false);
        expect(await observe('p', ['a', 'b', 'w'])).toEqual(before);
      });
    });

    // ---- claim --------------------------------------------------------------------------------------------------

    describe('claim', () => {
      test('Claimed: the reserved job moves to starting (version + 1, patch set) and keeps its lease; inUse unchanged', async () => {
        // Prepare
        await store.createPool('p', 2);
        const r = await reserved('r', 'p', T + 3);
        // Act
        const outcome = await store.claim(unit('p'), from(r, 'starting', { attempt: 'msg-9', claimableAt: T + 60_000 }), T + 10);
        // Assess
        expect(outcome).toBe(ClaimOutcome.Claimed);
        expect(await read('r')).toEqual({
          ...r,
          state: 'starting',
          version: r.version + 1,
          updatedAt: T + 10,
          attempt: 'msg-9',
          claimableAt: T + 60_000,
          lease: { pool: 'p', since: T + 3 },
        });
        expect(await store.getPool('p')).toEqual({ name: 'p', limit: 2, inUse: 1 });
      });

      test('Claimed at exactly the limit (inUse = limit)', async () => {
        await store.createPool('p', 2);
        await holding('a');
        const r = await reserved('r');
        expect(await store.claim(unit('p'), from(r, 'starting'), T + 10)).toBe(ClaimOutcome.Claimed);
      });

      test('Stale: the record changed since it was read; nothing changes', async () => {
        await store.createPool('p', 2);
        const r = await reserved('r');
        const before = await observe('p', ['r']);
        expect(await store.claim(unit('p'), { ...from(r, 'starting'), version: r.version - 1 }, T + 6)).toBe(ClaimOutcome.Stale);
        expect(await observe('p', ['r'])).toEqual(before);
        // A second claim of one read (a duplicated wake-up) finds the job claimed already.
        expect(await store.claim(unit('p'), from(r, 'starting', { attempt: 'm1' }), T + 7)).toBe(ClaimOutcome.Claimed);
        const claimed = await observe('p', ['r']);
        expect(await store.claim(unit('p'), from(r, 'starting', { attempt: 'm2' }), T + 8)).toBe(ClaimOutcome.Stale);
        expect(await observe('p', ['r'])).toEqual(claimed);
      });

      test('Stale: the job is not reserved (starting with a slot, or waiting without one); nothing changes', async () => {
        await store.createPool('p', 2);
        const s = await holding('s');
        const w = await waiting('w');
        const before = await observe('p', ['s', 'w']);
        expect(await store.claim(unit('p'), from(s, 'starting'), T + 6)).toBe(ClaimOutcome.Stale);
        expect(await store.claim(unit('p'), from(w, 'starting'), T + 6)).toBe(ClaimOutcome.Stale);
        expect(await observe('p', ['s', 'w'])).toEqual(before);
      });

      test('Stale: the job is reserved in another pool; nothing changes', async () => {
        await store.createPool('p', 2);
        await store.createPool('q', 2);
        const r = await reserved('r', 'q');
        const before = { p: await observe('p', ['r']), q: await observe('q', ['r']) };
        expect(await store.claim(unit('p'), from(r, 'starting'), T + 6)).toBe(ClaimOutcome.Stale);
        expect({ p: await observe('p', ['r']), q: await observe('q', ['r']) }).toEqual(before);
      });

      test('OverLimit: the limit was lowered below inUse; nothing changes', async () => {
        // Prepare
        await store.createPool('p', 3);
        await holding('a');
        await holding('b');
        const r = await reserved('r');
        await store.setLimit('p', 2);
        const before = await observe('p', ['a', 'b', 'r']);
        // Act
        const outcome = await store.claim(unit('p'), from(r, 'starting'), T + 9);
        // Assess
        expect(outcome).toBe(ClaimOutcome.OverLimit);
        expect(await observe('p', ['a', 'b', 'r'])).toEqual(before);
        expect(before.pool).toEqual({ name: 'p', limit: 2, inUse: 3 });
      });
    });

    // ---- pass ---------------------------------------------------------------------------------------------------

    describe('pass', () => {
      test('Passed: the finished job moves and loses its lease; the waiting one is reserved with a lease since now; inUse unchanged', async () => {
        // Prepare
        await store.createPool('p', 2);
        const done = await running('done');
        await holding('other');
        const w = await waiting('w');
        // Act
        const outcome = await store.pass(unit('p'), from(done, 'succeeded', { endedAt: T + 20 }), receiver('w', 'p'), T + 21);
        // Assess
        expect(outcome).toBe(PassOutcome.Passed);
        expect(await store.getPool('p')).toEqual({ name: 'p', limit: 2, inUse: 2 });
        const { lease: _lease, ...rest } = done;
        expect(await read('done')).toEqual({ ...rest, state: 'succeeded', version: done.version + 1, updatedAt: T + 21, endedAt: T + 20 });
        expect(await fixture.expiresAtOf('done')).toBe(expiryOf(T + 21, fixture.retentionDays));
        expect(await read('w')).toEqual({
          ...w,
          state: 'reserved',
          version: w.version + 1,
          updatedAt: T + 21,
          lease: { pool: 'p', since: T + 21 },
        });
        expect(await fixture.expiresAtOf('w')).toBeUndefined();
        expect(await allHolders('p')).toEqual(['other', 'w']);
      });

      test('Passed to a queued job too (a slot found for a job whose message is on its way)', async () => {
        await store.createPool('p', 1);
        const done = await running('done');
        const q = await queued('q');
        expect(await store.pass(unit('p'), from(done, 'failed'), receiver('q', 'p'), T + 9)).toBe(PassOutcome.Passed);
        expect(await read('q')).toMatchObject({ state: 'reserved', version: q.version + 1, lease: { pool: 'p', since: T + 9 } });
        await expectConsistent('p', ['done', 'q']);
      });

      test('Passed with a start attempt (receiveStarting): the waiter is starting under it, as a claim would leave it; its waiter item goes; firstStartAt kept when it had one', async () => {
        // Prepare: w waits (never started), q is queued again after a refused start (its first start at T + 5)
        await store.createPool('p', 3);
        const q0 = await holding('q');
        expect(await store.free(unit('p'), from(q0, 'queued', { firstStartAt: T + 5, attempts: 1 }), T + 6)).toBe(true);
        const q = await read('q');
        await store.setLimit('p', 2);
        const a = await running('a');
        const b = await running('b');
        const w = await waiting('w');
        await store.addWaiter(waiter('p', 'w', T, 'appflow'));
        const starting = { attempt: 'hand-off:w/1', claimableAt: T + 90_021 };
        // Act
        const outcome = await store.pass(unit('p'), from(a, 'succeeded'), { ...receiver('w', 'p', waitKey(T, 'w')), starting }, T + 21);
        const again = await store.pass(
          unit('p'),
          from(b, 'succeeded'),
          { ...receiver('q', 'p'), starting: { ...starting, attempt: 'hand-off:q/2' } },
          T + 22,
        );
        // Assess
        expect([outcome, again]).toEqual([PassOutcome.Passed, PassOutcome.Passed]);
        // As a claim right after would leave it: starting under the attempt, holding the slot since the hand-off.
        const started = (before: JobRecord, at: number, attempt: string, firstStartAt: number) => ({
          ...before,
          state: 'starting',
          version: before.version + 1,
          updatedAt: at,
          lease: { pool: 'p', since: at },
          attempt,
          claimableAt: T + 90_021,
          startRequested: true,
          firstStartAt,
        });
        expect(await read('w')).toEqual(started(w, T + 21, 'hand-off:w/1', T + 21));
        expect(await read('q')).toEqual(started(q, T + 22, 'hand-off:q/2', T + 5));
        expect(await store.countWaiters('p')).toBe(0);
        expect(await store.getPool('p')).toEqual({ name: 'p', limit: 2, inUse: 2 });
        expect(await allHolders('p')).toEqual(['q', 'w']);
      });

      test('a start attempt changes nothing when the waiter was let in already (TargetGone: it holds a slot): it is not started twice', async () => {
        await store.createPool('p', 2);
        const a = await running('a');
        const b = await running('b');
        await waiting('w');
        const starting = { attempt: 'hand-off:w/1', claimableAt: T + 90_021 };
        expect(await store.pass(unit('p'), from(a, 'succeeded'), { ...receiver('w', 'p'), starting }, T + 21)).toBe(PassOutcome.Passed);
        const started = await read('w');
        const other = { attempt: 'hand-off:w/2', claimableAt: T + 90_022 };
        expect(await store.pass(unit('p'), from(b, 'succeeded'), { ...receiver('w', 'p'), starting: other }, T + 22)).toBe(
          PassOutcome.TargetGone,
        );
        expect(await read('w')).toEqual(started);
      });

      test('Passed at exactly the limit, after a lowered limit was freed down to it', async () => {
        await store.createPool('p', 3);
        const a = await running('a');
        const b = await running('b');
        await running('c');
        await waiting('w');
        await store.setLimit('p', 2);
        expect(await store.free(unit('p'), from(a, 'succeeded'), T + 10)).toBe(true);
        expect(await store.pass(unit('p'), from(b, 'succeeded'), receiver('w', 'p'), T + 11)).toBe(PassOutcome.Passed);
        expect(await store.getPool('p')).toEqual({ name: 'p', limit: 2, inUse: 2 });
        expect(await allHolders('p')).toEqual(['c', 'w']);
      });

      test('Stale: the finished job changed since it was read; nothing changes', async () => {
        await store.createPool('p', 1);
        const done = await holding('done');
        expect(await ledger.move(from(done, 'starting', { lastError: 'noted' }), T + 5)).toBe(true);
        await waiting('w');
        const before = await observe('p', ['done', 'w']);
        expect(await store.pass(unit('p'), from(done, 'succeeded'), receiver('w', 'p'), T + 6)).toBe(PassOutcome.Stale);
        expect(await observe('p', ['done', 'w'])).toEqual(before);
      });

      test('Stale: the finished job holds no slot of this pool; nothing changes', async () => {
        await store.createPool('p', 2);
        await store.createPool('q', 2);
        await holding('a');
        const none = await queued('none');
        const inQ = await running('inQ', 'q');
        await waiting('w');
        const ids = ['a', 'none', 'inQ', 'w'];
        const before = { p: await observe('p', ids), q: await observe('q', ids) };
        expect(await store.pass(unit('p'), from(none, 'dead'), receiver('w', 'p'), T + 6)).toBe(PassOutcome.Stale);
        expect(await store.pass(unit('p'), from(inQ, 'succeeded'), receiver('w', 'p'), T + 6)).toBe(PassOutcome.Stale);
        expect({ p: await observe('p', ids), q: await observe('q', ids) }).toEqual(before);
      });

      test.each([
        ['reserved (by another hand-off)', 'reserved'],
        ['starting', 'starting'],
        ['running', 'running'],
        ['finished', 'succeeded'],
        ['dead', 'dead'],
        ['queued but holding a lease', 'queued-leased'],
        ['unknown', 'unknown'],
      ])('TargetGone / TargetDone: the target is %s; nothing changes', async (_label, target) => {
        // Prepare
        await store.createPool('p', 5);
        const done = await running('done');
        if (target === 'reserved') await reserved('t');
        if (target === 'starting') await holding('t');
        if (target === 'running') await running('t');
        if (target === 'succeeded') {
          const t = await running('t');
          expect(await store.free(unit('p'), from(t, 'succeeded'), T + 5)).toBe(true);
        }
        if (target === 'dead') {
          const t = await queued('t');
          expect(await ledger.move(from(t, 'dead'), T + 5)).toBe(true);
        }
        if (target === 'queued-leased') await queuedWithLease('t');
        const before = await observe('p', ['done', 't']);
        // Act
        const outcome = await store.pass(unit('p'), from(done, 'succeeded'), receiver('t', 'p'), T + 6);
        // Assess
        // Let in by another hand-off, or holding a slot (it may wait again under the same key): its waiter item stays;
        // past waiting with no slot: the item is stale.
        expect(outcome).toBe(
          ['reserved', 'starting', 'running', 'queued-leased'].includes(target) ? PassOutcome.TargetGone : PassOutcome.TargetDone,
        );
        expect(await observe('p', ['done', 't'])).toEqual(before);
        if (target === 'unknown') expect(before.records[1]).toBeUndefined();
      });

      test('OverLimit: the limit was lowered below inUse; nothing changes', async () => {
        // Prepare
        await store.createPool('p', 3);
        const done = await running('done');
        await running('b');
        await running('c');
        await waiting('w');
        await store.setLimit('p', 2);
        const before = await observe('p', ['done', 'b', 'c', 'w']);
        // Act
        const outcome = await store.pass(unit('p'), from(done, 'succeeded'), receiver('w', 'p'), T + 9);
        // Assess
        expect(outcome).toBe(PassOutcome.OverLimit);
        expect(await observe('p', ['done', 'b', 'c', 'w'])).toEqual(before);
      });

      test('a job cannot pass its slot to itself: it throws and changes nothing', async () => {
        await store.createPool('p', 1);
        const done = await running('done');
        const before = await observe('p', ['done']);
        await expect(store.pass(unit('p'), from(done, 'succeeded'), receiver('done', 'p'), T + 9)).rejects.toThrow();
        expect(await observe('p', ['done'])).toEqual(before);
      });
    });

    // ---- reserve ------------------------------------------------------------------------------------------------

    describe('reserve', () => {
      test.each([['waiting'], ['queued']])(
        'Reserved: a %s job gets a free slot (reserved, lease since now, version + 1); inUse + 1',
        async (state) => {
          await store.createPool('p', 2);
          const record = state === 'waiting' ? await waiting('j1') : await queued('j1');
          expect(await store.reserve(receiver('j1', 'p'), T + 7)).toBe(ReserveOutcome.Reserved);
          expect(await read('j1')).toEqual({
            ...record,
            state: 'reserved',
            version: record.version + 1,
            updatedAt: T + 7,
            lease: { pool: 'p', since: T + 7 },
          });
          expect(await store.getPool('p')).toEqual({ name: 'p', limit: 2, inUse: 1 });
          expect(await allHolders('p')).toEqual(['j1']);
        },
      );

      test('Full: no free slot (or over a lowered limit); nothing changes', async () => {
        await store.createPool('p', 2);
        await holding('a');
        await holding('b');
        await waiting('w');
        const before = await observe('p', ['a', 'b', 'w']);
        expect(await store.reserve(receiver('w', 'p'), T + 9)).toBe(ReserveOutcome.Full);
        await store.setLimit('p', 1);
        expect(await store.reserve(receiver('w', 'p'), T + 10)).toBe(ReserveOutcome.Full);
        expect(await observe('p', ['a', 'b', 'w'])).toEqual({ ...before, pool: { ...before.pool, limit: 1 } });
      });

      test('NoPool: the pool does not exist; nothing created, the job unchanged', async () => {
        const w = await waiting('w', 'ghost');
        expect(await store.reserve(receiver('w', 'ghost'), T + 9)).toBe(ReserveOutcome.NoPool);
        expect(await store.getPool('ghost')).toBeUndefined();
        expect(await store.listPools()).toEqual([]);
        expect(await ledger.get('w')).toEqual(w);
      });

      test.each([['reserved'], ['starting'], ['running'], ['dead'], ['queued-leased'], ['unknown']])(
        'TargetGone / TargetDone: the job is %s; nothing changes',
        async (state) => {
          await store.createPool('p', 5);
          if (state === 'reserved') await reserved('t');
          if (state === 'starting') await holding('t');
          if (state === 'running') await running('t');
          if (state === 'dead') {
            const t = await queued('t');
            expect(await ledger.move(from(t, 'dead'), T + 5)).toBe(true);
          }
          if (state === 'queued-leased') await queuedWithLease('t');
          const before = await observe('p', ['t']);
          expect(await store.reserve(receiver('t', 'p'), T + 9)).toBe(
            ['reserved', 'starting', 'running', 'queued-leased'].includes(state) ? ReserveOutcome.TargetGone : ReserveOutcome.TargetDone,
          );
          expect(await observe('p', ['t'])).toEqual(before);
        },
      );
    });

    // ---- one counter, many leases -------------------------------------------------------------------------------

    test('inUse equals the leases after every step of a mixed sequence', async () => {
      // Prepare
      await store.createPool('p', 3);
      const ids = ['a', 'b', 'c', 'd', 'e', 'w1', 'w2'];
      for (const id of ids) await queued(id);
      let now = T + 10;
      const step = async (id: string, act: (record: JobRecord) => Promise<unknown>) => act(await read(id));
      const steps: Array<() => Promise<unknown>> = [
        () => step('a', (r) => store.take(unit('p'), from(r, 'starting'), ++now)),
        () => step('b', (r) => store.take(unit('p'), from(r, 'starting'), ++now)),
        () => step('a', (r) => store.take(unit('p'), from(r, 'starting'), ++now)),
        () => step('w1', (r) => ledger.move(from(r, 'waiting'), ++now)),
        () => step('w2', (r) => ledger.move(from(r, 'waiting'), ++now)),
        () => step('a', (r) => store.pass(unit('p'), from(r, 'succeeded'), receiver('w1', 'p'), ++now)),
        () => step('c', (r) => store.take(unit('p'), from(r, 'starting'), ++now)),
        () => step('d', (r) => store.take(unit('p'), from(r, 'starting'), ++now)),
        () => store.setLimit('p', 1),
        () => step('w1', (r) => store.claim(unit('p'), from(r, 'starting'), ++now)),
        () => step('w1', (r) => store.freeOverLimit(unit('p'), 'p', from(r, 'waiting'), ++now)),
        () => step('b', (r) => store.pass(unit('p'), from(r, 'failed'), receiver('w2', 'p'), ++now)),
        () => step('b', (r) => store.free(unit('p'), from(r, 'failed'), ++now)),
        () => step('c', (r) => store.free(unit('p'), from(r, 'queued'), ++now)),
        () => store.reserve(receiver('w1', 'p'), ++now),
        () => store.setLimit('p', 4),
        () => store.reserve(receiver('w1', 'p'), ++now),
        () => step('e', (r) => store.take(unit('p'), from(r, 'starting'), ++now)),
        () => step('e', (r) => store.pass(unit('p'), from(r, 'succeeded'), receiver('e', 'p'), ++now)).catch(() => undefined),
        () => step('e', (r) => store.pass(unit('p'), from(r, 'succeeded'), receiver('c', 'p'), ++now)),
        () => step('d', (r) => store.free(unit('p'), from(r, 'succeeded'), ++now)),
        () => step('w1', (r) => store.claim(unit('p'), from(r, 'starting'), ++now)),
      ];
      // Act and assess
      for (const act of steps) {
        await act();
        await expectConsistent('p', ids);
      }
      expect(await store.getPool('p')).toEqual({ name: 'p', limit: 4, inUse: 2 });
      expect(await allHolders('p')).toEqual(['c', 'w1']);
    });

    // ---- waiters ------------------------------------------------------------------------------------------------

    describe('waiters', () => {
      test('oldestWaiters is first in, first out by wait key, whatever the order they were added in', async () => {
        // Prepare: times chosen so that a numeric-vs-string mix-up would reorder them (5 < 40 < 300 < 1000)
        await store.createPool('p', 1);
        const added = [
          waiter('p', 'late', T + 1000),
          waiter('p', 'first', T + 5),
          waiter('p', 'third', T + 300),
          waiter('p', 'second', T + 40),
        ];
        for (const w of added) await store.addWaiter(w);
        // Act
        const oldest = await store.oldestWaiters('p', 10);
        const two = await store.oldestWaiters('p', 2);
        // Assess
        expect(oldest.map((w) => w.jobId)).toEqual(['first', 'second', 'third', 'late']);
        expect(two.map((w) => w.jobId)).toEqual(['first', 'second']);
      });

      test('same arrival time: ordered by job id', async () => {
        for (const id of ['b', 'c', 'a']) await store.addWaiter(waiter('p', id, T));
        expect((await store.oldestWaiters('p', 3)).map((w) => w.jobId)).toEqual(['a', 'b', 'c']);
      });

      test('a waiter reads back exactly as it was parked', async () => {
        const parked = waiter('p', 'j1', T + 7, 'appflow');
        await store.addWaiter(parked);
        expect(await store.getWaiter('p', parked.waitKey)).toEqual(parked);
        expect(await store.oldestWaiters('p', 1)).toEqual([parked]);
      });

      test('oldestWaiters with count 0 is empty; of an empty pool is empty', async () => {
        await store.addWaiter(waiter('p', 'j1', T));
        expect(await store.oldestWaiters('p', 0)).toEqual([]);
        expect(await store.oldestWaiters('empty', 5)).toEqual([]);
      });

      test("with the job's record to create (a first delivery: register and park as one write): both, or neither", async () => {
        const parked = waiter('p', 'j1', T);
        const record: JobRecord = { ...registeredRecord(appflow('j1', 'p'), T), state: 'waiting', version: 2 };
        expect(await store.addWaiter(parked, record)).toBe(true);
        expect(await read('j1')).toEqual(record);
        expect(await store.oldestWaiters('p', 5)).toEqual([parked]);
        // A job with a record already: no waiter, the record unchanged.
        const other = await queued('j2');
        expect(await store.addWaiter(waiter('p', 'j2', T + 1), { ...other, state: 'waiting', version: 2 })).toBe(false);
        expect(await read('j2')).toEqual(other);
        expect((await store.oldestWaiters('p', 5)).map((w) => w.jobId)).toEqual(['j1']);
      });

      test('adding the same wait key twice parks the job once', async () => {
        const parked = waiter('p', 'j1', T);
        await store.addWaiter(parked);
        await store.addWaiter(parked);
        expect(await store.countWaiters('p')).toBe(1);
        expect(await store.oldestWaiters('p', 5)).toEqual([parked]);
      });

      test('getWaiter / removeWaiter / countWaiters; removing twice or removing a stranger is harmless', async () => {
        // Prepare
        const a = waiter('p', 'a', T + 1);
        const b = waiter('p', 'b', T + 2);
        await store.addWaiter(a);
        await store.addWaiter(b);
        expect(await store.countWaiters('p')).toBe(2);
        // Act
        await store.removeWaiter('p', a.waitKey);
        await store.removeWaiter('p', a.waitKey);
        await store.removeWaiter('p', waitKey(T, 'nobody'));
        // Assess
        expect(await store.getWaiter('p', a.waitKey)).toBeUndefined();
        expect(await store.getWaiter('p', b.waitKey)).toEqual(b);
        expect(await store.countWaiters('p')).toBe(1);
        expect((await store.oldestWaiters('p', 5)).map((w) => w.jobId)).toEqual(['b']);
      });

      test('hand-off tickets: each gate counts its own, one more each time, also when taken at once; waiters untouched', async () => {
        await store.addWaiter(waiter('p', 'a', T + 1));
        const together = await Promise.all(Array.from({ length: 8 }, () => store.handOffTicket('p')));
        expect([...together].sort((x, y) => x - y)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
        expect(await store.handOffTicket('p')).toBe(9);
        expect(await store.handOffTicket('q')).toBe(1);
        expect((await store.oldestWaiters('p', 5)).map((w) => w.jobId)).toEqual(['a']);
        expect(await store.countWaiters('p')).toBe(1);
      });

      test('the race mark: read with the head of the list, a later one replaces it; it is not a waiter', async () => {
        // Prepare: the highest priority a job may have sorts first among waiters; the mark goes before it all the same
        const top = { ...waiter('p', 'top', T + 9), waitKey: waitKey(T + 9, 'top', { priority: MAX_PRIORITY }) };
        for (const w of [waiter('p', 'a', T + 1), waiter('p', 'b', T + 2), top]) await store.addWaiter(w);
        expect(await store.readWaitingList('p', 2)).toEqual({ waiters: await store.oldestWaiters('p', 2) });
        // Act
        await store.markRace('p', T + 100);
        await store.markRace('p', T + 200);
        // Assess
        const read = await store.readWaitingList('p', 2);
        expect([read.racedAt, read.waiters.map((w) => w.jobId)]).toEqual([T + 200, ['top', 'a']]);
        expect((await store.readWaitingList('p', 10)).waiters.map((w) => w.jobId)).toEqual(['top', 'a', 'b']);
        expect(await store.readWaitingList('p', 0)).toEqual({ waiters: [], racedAt: T + 200 });
        expect((await store.oldestWaiters('p', 10)).map((w) => w.jobId)).toEqual(['top', 'a', 'b']);
        expect(await store.countWaiters('p')).toBe(3);
        // Another gate's list has its own mark (none), and a list with no waiters keeps its mark
        expect(await store.readWaitingList('q', 2)).toEqual({ waiters: [] });
        await store.markRace('q', T + 5);
        expect(await store.readWaitingList('q', 2)).toEqual({ waiters: [], racedAt: T + 5 });
      });

      test('waiters belong to their pool only, and do not touch the pool counter or the job records', async () => {
        // Prepare
        await store.createPool('p', 1);
        await store.createPool('q', 1);
        const job = await queued('in-p');
        await store.addWaiter(waiter('p', 'in-p', T));
        await store.addWaiter(waiter('q', 'in-q', T));
        // Assess
        expect((await store.oldestWaiters('p', 5)).map((w) => w.jobId)).toEqual(['in-p']);
        expect(await store.countWaiters('q')).toBe(1);
        expect(await store.getWaiter('q', waitKey(T, 'in-p'))).toBeUndefined();
        expect(await store.getPool('p')).toEqual({ name: 'p', limit: 1, inUse: 0 });
        expect(await ledger.get('in-p')).toEqual(job);
        expect(await store.holders('p')).toEqual({ holders: [] });
      });

      test('countWaiters counts many', async () => {
        for (let i = 0; i < 30; i++) await store.addWaiter(waiter('p', `j${String(i).padStart(2, '0')}`, T + i));
        expect(await store.countWaiters('p')).toBe(30);
        expect((await store.oldestWaiters('p', 30)).map((w) => w.jobId)).toEqual(
          Array.from({ length: 30 }, (_, i) => `j${String(i).padStart(2, '0')}`),
        );
      });
    });

    // ---- concurrency --------------------------------------------------------------------------------------------

    describe('keyed limits and weights', () => {
      const org = keyGate('org:acme');
      /** A job of pool p counting against org:acme with `units` units. */
      const demand = (units = 1): Demand => ({ pool: 'p', keys: ['org:acme'], units });
      const receiving = (jobId: string, units = 1, gate = 'p', key?: string): Receiver => ({
        jobId,
        demand: demand(units),
        gate,
        ...(key !== undefined && { waitKey: key }),
      });

      test('a take needs room in every gate for its units, and takes them from each in one write', async () => {
        // Prepare: the pool has 8, the key 3
        await store.createPool('p', 8);
        await store.createPool(org, 3);
        const heavy = await queued('heavy');
        const light = await queued('light');
        // Act + Assess: 2 + 2 > 3 in the key: the second take finds it full and changes nothing anywhere
        expect((await store.take(demand(2), from(heavy, 'starting'), T + 1)).outcome).toBe(TakeOutcome.Taken);
        expect((await store.take(demand(2), from(light, 'starting'), T + 2)).outcome).toBe(TakeOutcome.Full);
        expect(await store.getPool('p')).toEqual({ name: 'p', limit: 8, inUse: 2 });
        expect(await store.getPool(org)).toEqual({ name: org, limit: 3, inUse: 2 });
        expect(await read('light')).toEqual(light);
        // One unit still fits.
        expect((await store.take(demand(1), from(light, 'starting'), T + 3)).outcome).toBe(TakeOutcome.Taken);
        expect(await store.getPool(org)).toMatchObject({ inUse: 3 });
      });

      test('a take naming a gate that does not exist is NoPool, and changes nothing', async () => {
        await store.createPool('p', 8);
        const record = await queued('j');
        expect((await store.take(demand(), from(record, 'starting'), T + 1)).outcome).toBe(TakeOutcome.NoPool);
        expect(await store.getPool('p')).toMatchObject({ inUse: 0 });
        expect(await read('j')).toEqual(record);
      });

      test('free gives the units back to every gate; freeOverLimit only while the named gate is over its limit', async () => {
        await store.createPool('p', 8);
        await store.createPool(org, 4);
        const a = await queued('a');
        expect((await store.take(demand(3), from(a, 'starting'), T + 1)).outcome).toBe(TakeOutcome.Taken);
        const b = await reserveFor('b', 1);
        // The key is lowered under its use: b's reservation may be taken back because of it, not because of the pool.
        await store.setLimit(org, 2);
        expect(await store.freeOverLimit(demand(1), 'p', from(b, 'waiting'), T + 5)).toBe(false);
        expect(await store.freeOverLimit(demand(1), org, from(b, 'waiting'), T + 5)).toBe(true);
        expect(await store.getPool(org)).toEqual({ name: org, limit: 2, inUse: 3 });
        expect(await store.free(demand(3), from(await read('a'), 'succeeded'), T + 6)).toBe(true);
        expect(await store.getPool('p')).toMatchObject({ inUse: 0 });
        expect(await store.getPool(org)).toMatchObject({ inUse: 0 });
      });

      test('claim checks every gate: a reservation over a lowered keyed limit does not start', async () => {
        await store.createPool('p', 8);
        await store.createPool(org, 2);
        const r = await reserveFor('r', 2);
        await store.setLimit(org, 1);
        expect(await store.claim(demand(2), from(r, 'starting'), T + 5)).toBe(ClaimOutcome.OverLimit);
        await store.setLimit(org, 2);
        expect(await store.claim(demand(2), from(r, 'starting'), T + 6)).toBe(ClaimOutcome.Claimed);
      });

      test('pass hands over across gates: the finished job gives back its units, the waiter takes its own', async () => {
        // Prepare: a (pool only, 1 unit) runs; w needs 2 units of the pool and of the key
        await store.createPool('p', 2);
        await store.createPool(org, 2);
        const a = await holding('a');
        const b = await holding('b');
        const w = await waiting('w');
        const key = waitKey(T, 'w');
        await store.addWaiter({ ...waiter('p', 'w', T, 'appflow'), demand: demand(2) });
        // Act + Assess: one unit back is not room for two: OverLimit, nothing changes
        expect(await store.pass(unit('p'), from(a, 'succeeded'), receiving('w', 2, 'p', key), T + 5)).toBe(PassOutcome.OverLimit);
        expect(await read('w')).toEqual(w);
        expect(await store.free(unit('p'), from(a, 'succeeded'), T + 6)).toBe(true);
        // b's unit and the free one make two: w is reserved, the pool stays full, the key counts 2
        expect(await store.pass(unit('p'), from(b, 'succeeded'), receiving('w', 2, 'p', key), T + 7)).toBe(PassOutcome.Passed);
        expect(await store.getPool('p')).toEqual({ name: 'p', limit: 2, inUse: 2 });
        expect(await store.getPool(org)).toEqual({ name: org, limit: 2, inUse: 2 });
        expect(await read('w')).toMatchObject({ state: 'reserved', lease: { pool: 'p', since: T + 7 } });
        expect(await store.countWaiters('p')).toBe(0);
      });

      test("moveWaiter moves a waiter to another gate's list in one step, and refuses one no longer on its list", async () => {
        await store.createPool('p', 1);
        await store.createPool(org, 1);
        const parked = { ...waiter('p', 'w', T, 'appflow'), demand: demand(1) };
        await store.addWaiter(parked);
        expect(await store.moveWaiter(parked, org)).toBe(true);
        expect(await store.countWaiters('p')).toBe(0);
        expect(await store.oldestWaiters(org, 5)).toEqual([{ ...parked, gate: org }]);
        // The old list no longer has it: moving from there again changes nothing.
        expect(await store.moveWaiter(parked, org)).toBe(false);
        expect(await store.countWaiters(org)).toBe(1);
        expect(await store.countWaiters('p')).toBe(0);
      });

      test("fair rounds: a tenant's jobs take rounds one after another; a new tenant starts at the pool's round", async () => {
        await store.createPool('p', 1);
        expect([await store.fairRank('p', 'big'), await store.fairRank('p', 'big'), await store.fairRank('p', 'big')]).toEqual([0, 1, 2]);
        await store.advanceRound('p', 1);
        await store.advanceRound('p', 0); // never backwards
        // A new tenant joins the round being let in: ahead of big's round 2.
        expect(await store.fairRank('p', 'small')).toBe(1);
        expect(await store.fairRank('p', 'small')).toBe(2);
        expect(await store.fairRank('p', 'big')).toBe(3);
        await store.advanceRound('p', 10);
        expect(await store.fairRank('p', 'big')).toBe(10);
        // Rounds are per pool.
        await store.createPool('q', 1);
        expect(await store.fairRank('q', 'big')).toBe(0);
      });

      /** A waiting job of pool p given `units` of the pool and the key (reserved). */
      async function reserveFor(jobId: string, units: number): Promise<JobRecord> {
        await waiting(jobId);
        expect(await store.reserve(receiving(jobId, units), T + 3)).toBe(ReserveOutcome.Reserved);
        return read(jobId);
      }
    });

    describe('start rates', () => {
      test('admissions to a rated pool book starts one interval apart, up to the horizon; then RateLimited, nothing taken', async () => {
        // Prepare: 2 starts a second
        await store.createPool('p', 10);
        await store.setRate('p', 500);
        const jobs = await Promise.all(['a', 'b', 'c', 'd', 'e', 'f'].map((id) => queued(id)));
        // Act: six takes at the same moment
        const results = [];
        for (const job of jobs) results.push(await store.take(unit('p'), from(job, 'starting'), T + 10));
        // Assess: T+10, +510, +1010, +1510, +2010 (the horizon is 2 s), then none
        expect(results).toEqual([
          ...[10, 510, 1010, 1510, 2010].map((ms) => ({ outcome: TakeOutcome.Taken, startAt: T + ms })),
          { outcome: TakeOutcome.RateLimited },
        ]);
        expect(await read('b')).toMatchObject({ state: 'starting', startAt: T + 510 });
        expect(await read('f')).toEqual(jobs[5]);
        expect(await store.getPool('p')).toEqual({ name: 'p', limit: 10, inUse: 5, rate: { intervalMs: 500, tat: T + 2510 } });
        // Later, the next start is within the horizon again.
        expect(await store.take(unit('p'), from(jobs[5]!, 'starting'), T + 600)).toEqual({ outcome: TakeOutcome.Taken, startAt: T + 2510 });
      });

      test("a reserve and a pass book the receiver's start too, written on its record", async () => {
        await store.createPool('p', 2);
        const done = await holding('done', 'p', T + 2);
        await store.setRate('p', 1000);
        await waiting('w1');
        await waiting('w2');
        expect(await store.reserve(receiver('w1', 'p'), T + 100)).toBe(ReserveOutcome.Reserved);
        expect(await read('w1')).toMatchObject({ state: 'reserved', startAt: T + 100 });
        expect(await store.pass(unit('p'), from(done, 'succeeded'), receiver('w2', 'p'), T + 200)).toBe(PassOutcome.Passed);
        expect(await read('w2')).toMatchObject({ state: 'reserved', startAt: T + 1100 });
        expect((await store.getPool('p'))!.rate).toEqual({ intervalMs: 1000, tat: T + 2100 });
      });

      test("a reserve and a pass with a start attempt (receiveStarting) book the receiver's start too: starting, with its booked start and the claim's patch", async () => {
        await store.createPool('p', 2);
        const done = await holding('done', 'p', T + 2);
        await store.setRate('p', 1000);
        await waiting('w1');
        await waiting('w2');
        const starting = (id: string) => ({ attempt: `hand-off:${id}/1`, claimableAt: T + 90_000 });
        expect(await store.reserve({ ...receiver('w1', 'p'), starting: starting('w1') }, T + 100)).toBe(ReserveOutcome.Reserved);
        expect(await read('w1')).toMatchObject({
          state: 'starting',
          startAt: T + 100,
          attempt: 'hand-off:w1/1',
          startRequested: true,
          firstStartAt: T + 100,
        });
        expect(await store.pass(unit('p'), from(done, 'succeeded'), { ...receiver('w2', 'p'), starting: starting('w2') }, T + 200)).toBe(
          PassOutcome.Passed,
        );
        expect(await read('w2')).toMatchObject({ state: 'starting', startAt: T + 1100, attempt: 'hand-off:w2/1', claimableAt: T + 90_000 });
        expect((await store.getPool('p'))!.rate).toEqual({ intervalMs: 1000, tat: T + 2100 });
        expect(await allHolders('p')).toEqual(['w1', 'w2']);
      });

      test('a rate set or removed while jobs are admitted applies to the next admission (no stale belief lets one through)', async () => {
        await store.createPool('p', 10);
        const [a, b, c] = await Promise.all(['a', 'b', 'c'].map((id) => queued(id)));
        expect(await store.take(unit('p'), from(a!, 'starting'), T + 1)).toEqual({ outcome: TakeOutcome.Taken });
        await store.setRate('p', 60_000);
        expect(await store.take(unit('p'), from(b!, 'starting'), T + 2)).toEqual({ outcome: TakeOutcome.Taken, startAt: T + 2 });
        expect((await store.take(unit('p'), from(c!, 'starting'), T + 3)).outcome).toBe(TakeOutcome.RateLimited);
        await store.setRate('p', undefined);
        expect(await store.take(unit('p'), from(c!, 'starting'), T + 4)).toEqual({ outcome: TakeOutcome.Taken });
        expect(await store.getPool('p')).toEqual({ name: 'p', limit: 10, inUse: 3 });
      });

      test('claimTick elects one sender per due time: a later tick waits for the earlier one, a past one is replaced', async () => {
        await store.createPool('p', 1);
        expect(await store.claimTick('p', T + 5000, T)).toBe(true);
        expect(await store.claimTick('p', T + 5000, T + 1)).toBe(false);
        expect(await store.claimTick('p', T + 9000, T + 2)).toBe(false);
        expect(await store.claimTick('p', T + 3000, T + 3)).toBe(true); // sooner: sent as well
        expect(await store.claimTick('p', T + 9000, T + 3001)).toBe(true); // the last one is past
        expect(await store.claimTick('ghost', T + 1, T)).toBe(false);
      });
    });

    describe('concurrency', () => {
      test(
        '40 concurrent takes for 40 jobs on a pool of limit 6: exactly 6 Taken, inUse 6, exactly 6 leases',
        async () => {
          // Prepare
          await store.createPool('hot', 6);
          const ids = Array.from({ length: 40 }, (_, i) => `job-${String(i).padStart(2, '0')}`);
          const records = await Promise.all(ids.map((id) => queued(id, 'hot')));
          // Act
          const outcomes = await Promise.all(
            records.map(async (r, i) => (await store.take(unit('hot'), from(r, 'starting', { attempt: `m${i}` }), T + 10 + i)).outcome),
          );
          // Assess
          // On DynamoDB, takes at once on one counter conflict with each other: a take whose tries all met another
          // transaction answers Contended, writing nothing (neither local engine conflicts; the fault layer does).
          expect(outcomes.every((o) => o === TakeOutcome.Taken || o === TakeOutcome.Full || o === TakeOutcome.Contended)).toBe(true);
          const taken = ids.filter((_, i) => outcomes[i] === TakeOutcome.Taken);
          const contended = outcomes.filter((o) => o === TakeOutcome.Contended).length;
          expect(taken.length).toBeLessThanOrEqual(6);
          expect(taken.length + contended).toBeGreaterThanOrEqual(6);
          if (contended === 0) expect(taken).toHaveLength(6);
          expect(await store.getPool('hot')).toEqual({ name: 'hot', limit: 6, inUse: taken.length });
          const after = await Promise.all(ids.map(read));
          expect(after.filter((r) => r.lease).map((r) => r.jobId)).toEqual(taken);
          for (const [i, r] of after.entries()) {
            if (outcomes[i] === TakeOutcome.Taken) expect(r).toMatchObject({ state: 'starting', version: 2, attempt: `m${i}` });
            else expect(r).toEqual(records[i]);
          }
          expect(await allHolders('hot')).toEqual(taken);
          // A contended take wrote nothing: tried again one at a time, they fill the pool to exactly its limit.
          for (const [i, r] of records.entries()) {
            if (outcomes[i] !== TakeOutcome.Contended) continue;
            const again = await store.take(unit('hot'), from(r, 'starting', { attempt: `again${i}` }), T + 100 + i);
            expect([TakeOutcome.Taken, TakeOutcome.Full]).toContain(again.outcome);
          }
          expect(await store.getPool('hot')).toEqual({ name: 'hot', limit: 6, inUse: 6 });
        },
        timeoutMs,
      );

      test(
        'concurrent takes of one read of one job: one Taken, the others Stale (or Contended, having written nothing), one slot',
        async () => {
          await store.createPool('p', 5);
          const record = await queued('j1');
          const outcomes = await Promise.all(
            Array.from(
              { length: 6 },
              async (_, i) => (await store.take(unit('p'), from(record, 'starting', { attempt: `m${i}` }), T + i)).outcome,
            ),
          );
          expect(outcomes.filter((o) => o === TakeOutcome.Taken)).toHaveLength(1);
          // A take that lost every race for the counter (DynamoDB answers a transaction on an item another one holds
          // with a conflict; a loaded engine holds it longer) gives up Contended, writing nothing: the caller reads again.
          expect(outcomes.filter((o) => o !== TakeOutcome.Taken && o !== TakeOutcome.Stale && o !== TakeOutcome.Contended)).toEqual([]);
          expect(await store.getPool('p')).toEqual({ name: 'p', limit: 5, inUse: 1 });
          expect(await read('j1')).toMatchObject({ state: 'starting', version: 2, lease: { pool: 'p' } });
        },
        timeoutMs,
      );

      test(
        'a pass and a take racing for the last slot: the pass keeps it for the waiter, the take is Full',
        async () => {
          for (let round = 0; round < 5; round++) {
            // Prepare
            const pool = `last-${round}`;
            await store.createPool(pool, 1);
            const done = await running(`done-${round}`, pool);
            await waiting(`w-${round}`, pool);
            const newcomer = await queued(`n-${round}`, pool);
            // Act
            const [passed, took] = await Promise.all([
              store.pass(unit(pool), from(done, 'succeeded'), receiver(`w-${round}`, pool), T + 20),
              store.take(unit(pool), from(newcomer, 'starting'), T + 20),
            ]);
            // Assess
            expect([passed, took.outcome]).toEqual([PassOutcome.Passed, TakeOutcome.Full]);
            expect(await store.getPool(pool)).toEqual({ name: pool, limit: 1, inUse: 1 });
            expect(await allHolders(pool)).toEqual([`w-${round}`]);
            expect(await read(`n-${round}`)).toEqual(newcomer);
          }
        },
        timeoutMs,
      );

      test(
        'a pass and a free of the same slot (one read) racing: exactly one applies',
        async () => {
          for (let round = 0; round < 5; round++) {
            const pool = `race-${round}`;
            await store.createPool(pool, 1);
            const done = await running(`done-${round}`, pool);
            const w = await waiting(`w-${round}`, pool);
            const [freed, passed] = await Promise.all([
              store.free(unit(pool), from(done, 'succeeded'), T + 20),
              store.pass(unit(pool), from(done, 'succeeded'), receiver(`w-${round}`, pool), T + 20),
            ]);
            expect([freed, passed === PassOutcome.Passed].filter(Boolean)).toHaveLength(1);
            if (freed) {
              expect(passed).toBe(PassOutcome.Stale);
              expect(await store.getPool(pool)).toMatchObject({ inUse: 0 });
              expect(await read(`w-${round}`)).toEqual(w);
            } else {
              expect(await store.getPool(pool)).toMatchObject({ inUse: 1 });
              expect(await allHolders(pool)).toEqual([`w-${round}`]);
            }
            expect(await read(`done-${round}`)).toMatchObject({ state: 'succeeded', version: done.version + 1 });
          }
        },
        timeoutMs,
      );

      test(
        'two passes from the same finished job to different waiters: exactly one Passed, the other Stale',
        async () => {
          for (let round = 0; round < 5; round++) {
            // Prepare
            const pool = `two-${round}`;
            await store.createPool(pool, 1);
            const done = await running(`done-${round}`, pool);
            const w1 = await waiting(`w1-${round}`, pool);
            const w2 = await waiting(`w2-${round}`, pool);
            // Act
            const outcomes = await Promise.all([
              store.pass(unit(pool), from(done, 'succeeded'), receiver(w1.jobId, pool), T + 20),
              store.pass(unit(pool), from(done, 'succeeded'), receiver(w2.jobId, pool), T + 20),
            ]);
            // Assess
            expect([...outcomes].sort()).toEqual([PassOutcome.Passed, PassOutcome.Stale].sort());
            expect(await store.getPool(pool)).toEqual({ name: pool, limit: 1, inUse: 1 });
            const [winner, loser] = outcomes[0] === PassOutcome.Passed ? [w1, w2] : [w2, w1];
            expect(await read(winner.jobId)).toMatchObject({ state: 'reserved', lease: { pool, since: T + 20 } });
            expect(await read(loser.jobId)).toEqual(loser);
            expect(await allHolders(pool)).toEqual([winner.jobId]);
          }
        },
        timeoutMs,
      );

      test(
        'two finished jobs passing to the same waiter: one Passed, the other TargetGone',
        async () => {
          await store.createPool('p', 2);
          const a = await running('a');
          const b = await running('b');
          await waiting('w');
          const outcomes = await Promise.all([
            store.pass(unit('p'), from(a, 'succeeded'), receiver('w', 'p'), T + 20),
            store.pass(unit('p'), from(b, 'succeeded'), receiver('w', 'p'), T + 20),
          ]);
          expect([...outcomes].sort()).toEqual([PassOutcome.Passed, PassOutcome.TargetGone].sort());
          const loser = outcomes[0] === PassOutcome.Passed ? b : a;
          expect(await read(loser.jobId)).toEqual(loser);
          expect(await store.getPool('p')).toEqual({ name: 'p', limit: 2, inUse: 2 });
          await expectConsistent('p', ['a', 'b', 'w']);
        },
        timeoutMs,
      );

      test(
        'two reserves of the same job racing: one Reserved, the other TargetGone, one slot',
        async () => {
          await store.createPool('p', 3);
          await waiting('w');
          const outcomes = await Promise.all([store.reserve(receiver('w', 'p'), T + 20), store.reserve(receiver('w', 'p'), T + 21)]);
          expect([...outcomes].sort()).toEqual([ReserveOutcome.Reserved, ReserveOutcome.TargetGone].sort());
          expect(await store.getPool('p')).toEqual({ name: 'p', limit: 3, inUse: 1 });
          expect(await read('w')).toMatchObject({ state: 'reserved', version: 3 });
        },
        timeoutMs,
      );

      test(
        'a claim racing a lowered limit: either Claimed before the limit changed or OverLimit after, never half',
        async () => {
          for (let round = 0; round < 6; round++) {
            // Prepare
            const pool = `claim-${round}`;
            await store.createPool(pool, 2);
            await holding(`a-${round}`, pool);
            const r = await reserved(`r-${round}`, pool);
            // Act
            const [outcome] = await Promise.all([store.claim(unit(pool), from(r, 'starting'), T + 20), store.setLimit(pool, 1)]);
            // Assess
            expect([ClaimOutcome.Claimed, ClaimOutcome.OverLimit]).toContain(outcome);
            expect(await store.getPool(pool)).toEqual({ name: pool, limit: 1, inUse: 2 });
            const after = await read(r.jobId);
            if (outcome === ClaimOutcome.Claimed) {
              expect(after).toMatchObject({ state: 'starting', version: r.version + 1, lease: r.lease });
            } else {
              expect(after).toEqual(r);
              // The reservation is taken back instead of started.
              expect(await store.freeOverLimit(unit(pool), pool, from(r, 'waiting'), T + 21)).toBe(true);
              expect(await store.getPool(pool)).toMatchObject({ inUse: 1 });
            }
          }
        },
        timeoutMs,
      );
    });
  });
}
