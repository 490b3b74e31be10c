import type { SetRunStore, SetRunSummary } from '../../shared/ports/setRunStore';

export interface SetRunStoreFixture {
  store: SetRunStore;
  cleanup?(): Promise<void>;
}

const T = 1_767_225_600_000;
const SUMMARY: SetRunSummary = { total: 3, succeeded: 2, failed: 1, open: 0, failedIds: ['s.r.c'] };
let counter = 0;
/** Each test its own set, so one store (one table) serves the whole suite. */
const newSet = () => `set-${++counter}`;
const run = (set: string, name = '20261127T0200Z', startedAt = T) => ({ set, run: name, total: 3, keys: ['a', 'b', 'c'], startedAt });

/** What every SetRunStore must do (the fake, and the DynamoDB adapter on dynalite and DynamoDB Local). */
export function describeSetRunStoreContract(name: string, setup: () => Promise<SetRunStoreFixture>, timeoutMs = 30_000): void {
  describe(`SetRunStore contract: ${name}`, () => {
    let fixture: SetRunStoreFixture;
    let store: SetRunStore;
    beforeAll(async () => {
      fixture = await setup();
      store = fixture.store;
    }, timeoutMs);
    afterAll(async () => {
      await fixture?.cleanup?.();
    }, timeoutMs);

    test('a run is created once; the second start changes nothing and says so', async () => {
      const set = newSet();
      expect(await store.startRun({ ...run(set), scheduledFor: T - 5 })).toBe(true);
      expect(await store.startRun({ ...run(set), total: 9, startedAt: T + 1 })).toBe(false);
      expect(await store.getRun(set, '20261127T0200Z')).toEqual({ ...run(set), scheduledFor: T - 5, ended: 0 });
    });

    test('countEnded adds one and answers the run as counted; an unknown run is undefined and not created', async () => {
      const set = newSet();
      await store.startRun(run(set));
      expect((await store.countEnded(set, '20261127T0200Z'))?.ended).toBe(1);
      expect(await store.countEnded(set, '20261127T0200Z')).toMatchObject({ ended: 2, total: 3, keys: ['a', 'b', 'c'] });
      expect(await store.countEnded(set, 'other')).toBeUndefined();
      expect(await store.getRun(set, 'other')).toBeUndefined();
    });

    test('counts made at once all land', async () => {
      const set = newSet();
      await store.startRun(run(set));
      await Promise.all(Array.from({ length: 10 }, () => store.countEnded(set, '20261127T0200Z')));
      expect((await store.getRun(set, '20261127T0200Z'))!.ended).toBe(10);
    });

    test('complete is once: of two completions at once exactly one wins; the run stays open until notified', async () => {
      const set = newSet();
      await store.startRun(run(set));
      const results = await Promise.all([store.complete(set, '20261127T0200Z', SUMMARY, T + 10), store.complete(set, '20261127T0200Z', SUMMARY, T + 11)]);
      expect(results.sort()).toEqual([false, true]);
      expect(await store.getRun(set, '20261127T0200Z')).toMatchObject({ summary: SUMMARY });
      expect((await store.openRuns(100)).some((r) => r.set === set)).toBe(true);
      await store.markNotified(set, '20261127T0200Z', T + 20);
      expect((await store.openRuns(100)).some((r) => r.set === set)).toBe(false);
      expect(await store.getRun(set, '20261127T0200Z')).toMatchObject({ notifiedAt: T + 20 });
      expect(await store.complete(set, 'unknown', SUMMARY, T)).toBe(false);
    });

    test('open runs list every run started and not notified, with their counts; markChecked notes a read', async () => {
      const set = newSet();
      await store.startRun(run(set, 'r1'));
      await store.startRun(run(set, 'r2'));
      await store.countEnded(set, 'r2');
      await store.markChecked(set, 'r1', T + 5);
      const open = (await store.openRuns(100)).filter((r) => r.set === set).sort((a, b) => a.run.localeCompare(b.run));
      expect(open.map((r) => [r.run, r.ended, r.checkedAt])).toEqual([
        ['r1', 0, T + 5],
        ['r2', 1, undefined],
      ]);
    });

    test("a set's runs, newest first, at most max", async () => {
      const set = newSet();
      await store.startRun(run(set, '20261125T0200Z', T));
      await store.startRun(run(set, 'now-x', T + 2));
      await store.startRun(run(set, '20261126T0200Z', T + 1));
      expect((await store.runs(set, 2)).map((r) => r.run)).toEqual(['now-x', '20261126T0200Z']);
      expect(await store.runs(newSet(), 5)).toEqual([]);
    });

    test('pause and resume a set', async () => {
      const set = newSet();
      expect(await store.isPaused(set)).toBe(false);
      await store.setPaused(set, true);
      expect(await store.isPaused(set)).toBe(true);
      await store.setPaused(set, false);
      expect(await store.isPaused(set)).toBe(false);
    });
  });
}
