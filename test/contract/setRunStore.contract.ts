import { MAX_ITEM_BYTES } from '../../shared/adapters/dynamodb/itemSize';
import type { OpenRunCursor, SetRun, SetRunStore, SetRunSummary } from '../../shared/ports/setRunStore';

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

/** Every open run, page after page (of `max`), and the pages' sizes. */
async function allOpenRuns(store: SetRunStore, max = 100): Promise<{ runs: SetRun[]; pages: number[] }> {
  const runs: SetRun[] = [];
  const pages: number[] = [];
  let after: OpenRunCursor | undefined;
  do {
    const page = await store.openRuns({ ...(after && { after }), max });
    runs.push(...page.runs);
    pages.push(page.runs.length);
    after = page.next;
  } while (after);
  return { runs, pages };
}
const openOf = async (store: SetRunStore, set: string) => (await allOpenRuns(store)).runs.filter((r) => r.set === set);

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
      expect((await store.countEnded(set, '20261127T0200Z', 'j-a', 1_000))?.ended).toBe(1);
      expect(await store.countEnded(set, '20261127T0200Z', 'j-b', 2_000)).toMatchObject({
        ended: 2,
        countedAt: 2_000,
        total: 3,
        keys: ['a', 'b', 'c'],
      });
      expect(await store.countEnded(set, 'other', 'j-c', 3_000)).toBeUndefined();
      expect(await store.getRun(set, 'other')).toBeUndefined();
    });

    test('counts made at once all land', async () => {
      const set = newSet();
      await store.startRun(run(set));
      await Promise.all(Array.from({ length: 10 }, (_, i) => store.countEnded(set, '20261127T0200Z', `j-${i}`, 4_000)));
      expect((await store.getRun(set, '20261127T0200Z'))!.ended).toBe(10);
    });

    test("a count made again by the job counted last (the SDK's retry, its answer lost) is not counted twice; another job's is", async () => {
      const set = newSet();
      await store.startRun(run(set));
      await store.countEnded(set, '20261127T0200Z', 'j-a', 1_000);
      expect(await store.countEnded(set, '20261127T0200Z', 'j-a', 1_000)).toMatchObject({ ended: 1, countedAt: 1_000 });
      expect(await store.countEnded(set, '20261127T0200Z', 'j-b', 2_000)).toMatchObject({ ended: 2, countedAt: 2_000 });
      expect(await store.countEnded(set, 'other', 'j-b', 3_000)).toBeUndefined();
    });

    test('complete is once: of two completions at once exactly one wins; the run stays open until notified', async () => {
      const set = newSet();
      await store.startRun(run(set));
      const results = await Promise.all([
        store.complete(set, '20261127T0200Z', SUMMARY, T + 10),
        store.complete(set, '20261127T0200Z', SUMMARY, T + 11),
      ]);
      expect(results.sort()).toEqual([false, true]);
      expect(await store.getRun(set, '20261127T0200Z')).toMatchObject({ summary: SUMMARY });
      expect(await openOf(store, set)).toHaveLength(1);
      await store.markNotified(set, '20261127T0200Z', T + 20);
      expect(await openOf(store, set)).toEqual([]);
      expect(await store.getRun(set, '20261127T0200Z')).toMatchObject({ notifiedAt: T + 20 });
      expect(await store.complete(set, 'unknown', SUMMARY, T)).toBe(false);
    });

    test('open runs list every run started and not notified, with their counts; markChecked notes a read', async () => {
      const set = newSet();
      await store.startRun(run(set, 'r1'));
      await store.startRun(run(set, 'r2'));
      await store.countEnded(set, 'r2', 'j-a', 5_000);
      await store.markChecked(set, 'r1', T + 5, 2);
      const open = (await openOf(store, set)).sort((a, b) => a.run.localeCompare(b.run));
      expect(open.map((r) => [r.run, r.ended, r.checkedAt, r.checkedOpen])).toEqual([
        ['r1', 0, T + 5, 2],
        ['r2', 1, undefined, undefined],
      ]);
    });

    test('open runs come a page at a time, in order, each once; a page whose runs were all notified still leads on', async () => {
      const set = newSet();
      const names = Array.from({ length: 7 }, (_, i) => `r${i}`);
      for (const name of [...names].reverse()) await store.startRun(run(set, name));
      await store.markNotified(set, 'r3', T + 1);
      await store.markNotified(set, 'r4', T + 1);
      await store.markNotified(set, 'r5', T + 1);
      // Pages of 2 over every open run of the table (other tests' runs too): this set's in order, none twice, none lost.
      const { runs, pages } = await allOpenRuns(store, 2);
      expect(pages.every((n) => n <= 2)).toBe(true);
      expect(runs.filter((r) => r.set === set).map((r) => r.run)).toEqual(['r0', 'r1', 'r2', 'r6']);
      const keys = runs.map((r) => `${r.set}#${r.run}`);
      expect(new Set(keys).size).toBe(keys.length);
      expect(keys).toEqual([...keys].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))));
      // after a run: the page starts at the next one
      const next = await store.openRuns({ after: { set, run: 'r1' }, max: 2 });
      expect(next.runs.map((r) => `${r.set}#${r.run}`)).toEqual([`${set}#r2`, `${set}#r6`].slice(0, next.runs.length));
      expect(next.runs[0]).toMatchObject({ set, run: 'r2' });
    });

    test('an item over 400 KB is refused (ValidationException), as DynamoDB refuses it; one just under fits', async () => {
      const set = newSet();
      const keysOf = (count: number) => Array.from({ length: count }, (_, i) => `k${String(i).padStart(39, '0')}`);
      // 41 bytes a key in the list (40 + 1): 10,000 keys are 410,000 bytes, over 409,600
      await expect(store.startRun({ ...run(set, 'big'), keys: keysOf(10_000), total: 10_000 })).rejects.toMatchObject({
        name: 'ValidationException',
      });
      expect(await store.getRun(set, 'big')).toBeUndefined();
      expect(MAX_ITEM_BYTES).toBe(409_600);
      // 9,900 keys (405,900 bytes with the rest of the item) fit; a summary that pushes it over is refused
      expect(await store.startRun({ ...run(set, 'fits'), keys: keysOf(9_900), total: 9_900 })).toBe(true);
      const failedIds = keysOf(100).map((k) => `${set}.fits.${k}`);
      await expect(store.complete(set, 'fits', { ...SUMMARY, failedIds }, T + 1)).rejects.toMatchObject({ name: 'ValidationException' });
      expect((await store.getRun(set, 'fits'))!.completedAt).toBeUndefined();
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
