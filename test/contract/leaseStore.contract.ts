import type { Holder } from '../../shared/domain/pool';
import { type Waiter, waitKey } from '../../shared/domain/waiting';
import { AcquireOutcome, type LeaseStore, TransferOutcome } from '../../shared/ports/leaseStore';

export interface LeaseStoreFixture {
  store: LeaseStore;
  cleanup?(): Promise<void>;
}

const T = 1_767_225_600_000; // 2026-01-01T00:00:00Z
const holder = (since = T, kind: Holder['kind'] = 'appflow'): Holder => ({ kind, since });

function waiter(pool: string, jobId: string, firstSeenAt: number, kind: Waiter['kind'] = 'glue'): Waiter {
  return {
    pool,
    jobId,
    kind,
    waitKey: waitKey(firstSeenAt, jobId),
    body: JSON.stringify({ id: jobId, pool, kind, jobName: `job-${jobId}` }),
    since: firstSeenAt,
  };
}

/** Fisher-Yates with a fixed seed, so a failing order can be replayed. */
function shuffled<T>(items: T[], seed: number): T[] {
  const out = [...items];
  let state = seed;
  const next = () => (state = (state * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648;
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/**
 * What every LeaseStore must do, whatever stores it. `setup` gives a store with no pools (a fresh table, say) and is
 * called before each test; `cleanup` after it.
 */
export function describeLeaseStoreContract(name: string, setup: () => Promise<LeaseStoreFixture>, timeoutMs = 30_000): void {
  describe(`LeaseStore contract: ${name}`, () => {
    let fixture: LeaseStoreFixture;
    let store: LeaseStore;

    beforeEach(async () => {
      fixture = await setup();
      store = fixture.store;
    }, timeoutMs);
    afterEach(async () => {
      await fixture?.cleanup?.();
    }, timeoutMs);

    /** inUse must always equal the number of holders. */
    async function expectConsistent(pool: string): Promise<void> {
      const snapshot = await store.getPool(pool);
      expect(snapshot).toBeDefined();
      expect(snapshot!.inUse).toBe(Object.keys(snapshot!.holders).length);
    }

    describe('pools', () => {
      test('createPool creates an empty pool once; a second create changes nothing', async () => {
        // Act
        const first = await store.createPool('p', 3);
        const second = await store.createPool('p', 7);
        // Assess
        expect(first).toBe(true);
        expect(second).toBe(false);
        expect(await store.getPool('p')).toEqual({ name: 'p', limit: 3, inUse: 0, holders: {} });
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
        // Assess
        expect([...(await store.listPools())].sort()).toEqual(['a-pool', 'b-pool']);
      });

      test('setLimit changes the limit and keeps holders and inUse', async () => {
        // Prepare
        await store.createPool('p', 2);
        await store.acquire('p', 'j1', holder(T + 1));
        // Act
        await store.setLimit('p', 5);
        // Assess
        expect(await store.getPool('p')).toEqual({ name: 'p', limit: 5, inUse: 1, holders: { j1: holder(T + 1) } });
      });

      test('setLimit creates a missing pool, empty, and it can be acquired at once', async () => {
        // Act
        await store.setLimit('fresh', 1);
        // Assess
        expect(await store.getPool('fresh')).toEqual({ name: 'fresh', limit: 1, inUse: 0, holders: {} });
        expect(await store.acquire('fresh', 'j1', holder())).toBe(AcquireOutcome.Acquired);
        expect(await store.listPools()).toContain('fresh');
      });

      test('lowering the limit below inUse never removes holders', async () => {
        // Prepare
        await store.createPool('p', 3);
        for (const id of ['j1', 'j2', 'j3']) await store.acquire('p', id, holder());
        // Act
        await store.setLimit('p', 1);
        // Assess
        const pool = await store.getPool('p');
        expect(pool).toMatchObject({ limit: 1, inUse: 3 });
        expect(Object.keys(pool!.holders).sort()).toEqual(['j1', 'j2', 'j3']);
        expect(await store.acquire('p', 'j4', holder())).toBe(AcquireOutcome.Full);
      });
    });

    describe('acquire and release', () => {
      test('acquires up to the limit, then Full; holders name each job with its holder data', async () => {
        // Prepare
        await store.createPool('p', 2);
        // Act
        const outcomes = [
          await store.acquire('p', 'j1', holder(T + 1, 'appflow')),
          await store.acquire('p', 'j2', holder(T + 2, 'glue')),
          await store.acquire('p', 'j3', holder(T + 3)),
        ];
        // Assess
        expect(outcomes).toEqual([AcquireOutcome.Acquired, AcquireOutcome.Acquired, AcquireOutcome.Full]);
        expect(await store.getPool('p')).toEqual({
          name: 'p',
          limit: 2,
          inUse: 2,
          holders: { j1: { kind: 'appflow', since: T + 1 }, j2: { kind: 'glue', since: T + 2 } },
        });
      });

      test('a second acquire by the holding job is AlreadyHeld and changes nothing (even when the pool is full)', async () => {
        // Prepare
        await store.createPool('p', 1);
        await store.acquire('p', 'j1', holder(T));
        // Act
        const again = await store.acquire('p', 'j1', holder(T + 999, 'glue'));
        // Assess
        expect(again).toBe(AcquireOutcome.AlreadyHeld);
        expect(await store.getPool('p')).toEqual({ name: 'p', limit: 1, inUse: 1, holders: { j1: holder(T) } });
      });

      test('AlreadyHeld on a pool with room too, without taking a second slot', async () => {
        await store.createPool('p', 5);
        await store.acquire('p', 'j1', holder());
        expect(await store.acquire('p', 'j1', holder())).toBe(AcquireOutcome.AlreadyHeld);
        expect((await store.getPool('p'))!.inUse).toBe(1);
      });

      test('acquire on a pool that does not exist is NoPool and creates nothing', async () => {
        expect(await store.acquire('ghost', 'j1', holder())).toBe(AcquireOutcome.NoPool);
        expect(await store.getPool('ghost')).toBeUndefined();
        expect(await store.listPools()).toEqual([]);
      });

      test('a pool with limit 0 is paused: every acquire is Full', async () => {
        await store.createPool('paused', 0);
        expect(await store.acquire('paused', 'j1', holder())).toBe(AcquireOutcome.Full);
        expect(await store.getPool('paused')).toEqual(expect.objectContaining({ inUse: 0, holders: {} }));
      });

      test('release frees the slot once; a second release is a no-op that returns false', async () => {
        // Prepare
        await store.createPool('p', 2);
        await store.acquire('p', 'j1', holder());
        await store.acquire('p', 'j2', holder());
        // Act
        const first = await store.release('p', 'j1');
        const second = await store.release('p', 'j1');
        // Assess
        expect([first, second]).toEqual([true, false]);
        expect(await store.getPool('p')).toEqual({ name: 'p', limit: 2, inUse: 1, holders: { j2: holder() } });
      });

      test('release by a job that holds nothing changes nothing', async () => {
        await store.createPool('p', 2);
        await store.acquire('p', 'j1', holder());
        expect(await store.release('p', 'stranger')).toBe(false);
        expect(await store.getPool('p')).toEqual({ name: 'p', limit: 2, inUse: 1, holders: { j1: holder() } });
      });

      test('release on a pool that does not exist is false and creates nothing', async () => {
        expect(await store.release('ghost', 'j1')).toBe(false);
        expect(await store.getPool('ghost')).toBeUndefined();
      });

      test('a freed slot can be taken again, by the same job or another', async () => {
        await store.createPool('p', 1);
        await store.acquire('p', 'j1', holder());
        await store.release('p', 'j1');
        expect(await store.acquire('p', 'j2', holder())).toBe(AcquireOutcome.Acquired);
        await store.release('p', 'j2');
        expect(await store.acquire('p', 'j1', holder())).toBe(AcquireOutcome.Acquired);
        await expectConsistent('p');
      });

      test('inUse equals the number of holders after every step of a mixed sequence', async () => {
        // Prepare
        await store.createPool('p', 3);
        const steps: Array<() => Promise<unknown>> = [
          () => store.acquire('p', 'a', holder()),
          () => store.acquire('p', 'b', holder()),
          () => store.acquire('p', 'a', holder()),
          () => store.release('p', 'x'),
          () => store.transfer('p', 'a', 'c', holder()),
          () => store.acquire('p', 'd', holder()),
          () => store.acquire('p', 'e', holder()),
          () => store.setLimit('p', 1),
          () => store.transfer('p', 'b', 'f', holder()),
          () => store.release('p', 'b'),
          () => store.release('p', 'b'),
          () => store.acquire('p', 'g', holder()),
          () => store.setLimit('p', 4),
          () => store.acquire('p', 'g', holder()),
          () => store.transfer('p', 'g', 'g', holder()).catch(() => undefined),
          () => store.transfer('p', 'g', 'h', holder()),
          () => store.release('p', 'c'),
          () => store.release('p', 'd'),
          () => store.release('p', 'h'),
        ];
        // Act and assess
        for (const step of steps) {
          await step();
          await expectConsistent('p');
        }
        expect(await store.getPool('p')).toEqual({ name: 'p', limit: 4, inUse: 0, holders: {} });
      });
    });

    describe('transfer', () => {
      test('Transferred: the slot moves from the finished job to the waiting one, inUse unchanged', async () => {
        // Prepare
        await store.createPool('p', 2);
        await store.acquire('p', 'done', holder(T));
        await store.acquire('p', 'other', holder(T));
        // Act
        const outcome = await store.transfer('p', 'done', 'next', holder(T + 5, 'glue'));
        // Assess
        expect(outcome).toBe(TransferOutcome.Transferred);
        expect(await store.getPool('p')).toEqual({
          name: 'p',
          limit: 2,
          inUse: 2,
          holders: { other: holder(T), next: { kind: 'glue', since: T + 5 } },
        });
      });

      test('NotHeld: the finished job holds nothing (a duplicate release); nothing changes', async () => {
        await store.createPool('p', 1);
        await store.acquire('p', 'j1', holder());
        expect(await store.transfer('p', 'gone', 'next', holder())).toBe(TransferOutcome.NotHeld);
        expect(await store.getPool('p')).toEqual({ name: 'p', limit: 1, inUse: 1, holders: { j1: holder() } });
      });

      test('NotHeld on a pool that does not exist', async () => {
        expect(await store.transfer('ghost', 'a', 'b', holder())).toBe(TransferOutcome.NotHeld);
        expect(await store.getPool('ghost')).toBeUndefined();
      });

      test('TargetHeld: the waiting job holds a slot already; nothing changes', async () => {
        await store.createPool('p', 2);
        await store.acquire('p', 'done', holder(T));
        await store.acquire('p', 'next', holder(T + 1));
        expect(await store.transfer('p', 'done', 'next', holder(T + 9))).toBe(TransferOutcome.TargetHeld);
        expect(await store.getPool('p')).toEqual({ name: 'p', limit: 2, inUse: 2, holders: { done: holder(T), next: holder(T + 1) } });
      });

      test('a job cannot hand its slot to itself: transfer(a, a) throws and changes nothing', async () => {
        await store.createPool('p', 1);
        await store.acquire('p', 'j1', holder(T));
        await expect(store.transfer('p', 'j1', 'j1', holder(T + 1))).rejects.toThrow();
        expect(await store.getPool('p')).toEqual({ name: 'p', limit: 1, inUse: 1, holders: { j1: holder(T) } });
      });

      test('OverLimit after the limit was lowered below inUse; nothing changes', async () => {
        // Prepare
        await store.createPool('p', 3);
        for (const id of ['a', 'b', 'c']) await store.acquire('p', id, holder());
        await store.setLimit('p', 2);
        // Act
        const outcome = await store.transfer('p', 'a', 'next', holder());
        // Assess
        expect(outcome).toBe(TransferOutcome.OverLimit);
        const pool = await store.getPool('p');
        expect(pool).toMatchObject({ limit: 2, inUse: 3 });
        expect(Object.keys(pool!.holders).sort()).toEqual(['a', 'b', 'c']);
      });

      test('after lowering, a transfer is allowed again once inUse is back at the limit', async () => {
        await store.createPool('p', 3);
        for (const id of ['a', 'b', 'c']) await store.acquire('p', id, holder());
        await store.setLimit('p', 2);
        expect(await store.release('p', 'a')).toBe(true);
        expect(await store.transfer('p', 'b', 'next', holder())).toBe(TransferOutcome.Transferred);
        const pool = await store.getPool('p');
        expect(pool).toMatchObject({ limit: 2, inUse: 2 });
        expect(Object.keys(pool!.holders).sort()).toEqual(['c', 'next']);
      });

      test('release and transfer of the same slot racing: exactly one takes effect', async () => {
        // Prepare
        await store.createPool('p', 1);
        await store.acquire('p', 'done', holder());
        // Act
        const [released, transferred] = await Promise.all([store.release('p', 'done'), store.transfer('p', 'done', 'next', holder())]);
        // Assess
        const pool = await store.getPool('p');
        expect([released, transferred === TransferOutcome.Transferred].filter(Boolean)).toHaveLength(1);
        if (released) expect(pool).toEqual(expect.objectContaining({ inUse: 0, holders: {} }));
        else expect(pool).toEqual(expect.objectContaining({ inUse: 1, holders: { next: holder() } }));
      });

      test('two finished jobs handing off to the same waiter: one Transferred, the other TargetHeld', async () => {
        await store.createPool('p', 2);
        await store.acquire('p', 'a', holder());
        await store.acquire('p', 'b', holder());
        const outcomes = await Promise.all([store.transfer('p', 'a', 'w', holder()), store.transfer('p', 'b', 'w', holder())]);
        expect([...outcomes].sort()).toEqual([TransferOutcome.TargetHeld, TransferOutcome.Transferred].sort());
        const pool = await store.getPool('p');
        expect(pool!.inUse).toBe(2);
        expect(Object.keys(pool!.holders)).toHaveLength(2);
        expect(pool!.holders).toHaveProperty('w');
      });
    });

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

      test('waiters belong to their pool only, and do not touch the pool item', async () => {
        // Prepare
        await store.createPool('p', 1);
        await store.createPool('q', 1);
        await store.addWaiter(waiter('p', 'in-p', T));
        await store.addWaiter(waiter('q', 'in-q', T));
        // Assess
        expect((await store.oldestWaiters('p', 5)).map((w) => w.jobId)).toEqual(['in-p']);
        expect(await store.countWaiters('q')).toBe(1);
        expect(await store.getWaiter('q', waitKey(T, 'in-p'))).toBeUndefined();
        expect(await store.getPool('p')).toEqual({ name: 'p', limit: 1, inUse: 0, holders: {} });
      });

      test('countWaiters counts many', async () => {
        for (let i = 0; i < 30; i++) await store.addWaiter(waiter('p', `j${i}`, T + i));
        expect(await store.countWaiters('p')).toBe(30);
        expect((await store.oldestWaiters('p', 30)).map((w) => w.jobId)).toEqual(Array.from({ length: 30 }, (_, i) => `j${i}`));
      });
    });

    describe('concurrency', () => {
      test(
        '200 concurrent acquires on a pool of limit 8 grant exactly 8',
        async () => {
          // Prepare
          await store.createPool('hot', 8);
          const ids = Array.from({ length: 200 }, (_, i) => `job-${i}`);
          // Act
          const outcomes = await Promise.all(ids.map((id) => store.acquire('hot', id, holder())));
          // Assess
          const acquired = ids.filter((_, i) => outcomes[i] === AcquireOutcome.Acquired);
          expect(acquired).toHaveLength(8);
          expect(outcomes.filter((o) => o === AcquireOutcome.Full)).toHaveLength(192);
          const pool = await store.getPool('hot');
          expect(pool!.inUse).toBe(8);
          expect(Object.keys(pool!.holders).sort()).toEqual([...acquired].sort());
        },
        timeoutMs,
      );

      test(
        '200 concurrent acquires with duplicate job ids mixed in: each job counted once, exactly 8 holders',
        async () => {
          // Prepare: 50 jobs, each asking 4 times, in a shuffled order
          await store.createPool('hot', 8);
          const calls = shuffled(
            Array.from({ length: 200 }, (_, i) => `job-${i % 50}`),
            7,
          );
          // Act
          const outcomes = await Promise.all(calls.map((id) => store.acquire('hot', id, holder())));
          // Assess
          const pool = await store.getPool('hot');
          const holders = Object.keys(pool!.holders);
          expect(pool!.inUse).toBe(8);
          expect(holders).toHaveLength(8);
          const byJob = new Map<string, AcquireOutcome[]>();
          calls.forEach((id, i) => byJob.set(id, [...(byJob.get(id) ?? []), outcomes[i]!]));
          for (const [id, results] of byJob) {
            if (holders.includes(id)) {
              // a holder acquired exactly once; its other calls saw its own slot
              expect(results.filter((r) => r === AcquireOutcome.Acquired)).toHaveLength(1);
              expect(results.filter((r) => r === AcquireOutcome.AlreadyHeld)).toHaveLength(results.length - 1);
            } else {
              expect(results.every((r) => r === AcquireOutcome.Full)).toBe(true);
            }
          }
        },
        timeoutMs,
      );
    });
  });
}
