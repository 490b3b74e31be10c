import { ReadAtMostEvery } from '../../../shared/dashboard/readAtMostEvery';

/** A read that finishes when the test says so, numbered in the order the reads began. */
function controlledReads() {
  const pending: Array<{ resolve: (value: number) => void; reject: (error: Error) => void }> = [];
  return {
    read: () => new Promise<number>((resolve, reject) => pending.push({ resolve, reject })),
    finish: (index: number) => pending[index]!.resolve(index),
    fail: (index: number) => pending[index]!.reject(new Error(`read ${index} failed`)),
    get begun() {
      return pending.length;
    },
  };
}

test('askers during a read share it; a value younger than maxAgeMs is served without a read', async () => {
  let now = 1_000;
  const reads = controlledReads();
  const cache = new ReadAtMostEvery(reads.read, 3_000, () => now);
  const asked = Array.from({ length: 20 }, () => cache.get());
  expect(reads.begun).toBe(1);
  reads.finish(0);
  expect(await Promise.all(asked)).toEqual(Array(20).fill(0));
  now += 2_999;
  expect(await cache.get()).toBe(0);
  expect(reads.begun).toBe(1);
  // Its age counts from when the read began, not from when it ended.
  now += 1;
  const next = cache.get();
  expect(reads.begun).toBe(2);
  reads.finish(1);
  expect(await next).toBe(1);
  expect(cache.readCount).toBe(2);
});

test('after invalidate the next asker gets a read that began after it, not the one under way', async () => {
  const reads = controlledReads();
  const cache = new ReadAtMostEvery(reads.read, 60_000, () => 0);
  const before = cache.get();
  cache.invalidate();
  const after = cache.get();
  expect(reads.begun).toBe(2);
  reads.finish(0);
  reads.finish(1);
  expect([await before, await after]).toEqual([0, 1]);
  // The read begun before the change is not kept: the one after it is.
  expect(await cache.get()).toBe(1);
  expect(reads.begun).toBe(2);
});

test('a failed read is not kept: every asker of it gets the error, the next asker reads again', async () => {
  const reads = controlledReads();
  const cache = new ReadAtMostEvery(reads.read, 60_000, () => 0);
  const asked = [cache.get(), cache.get()];
  reads.fail(0);
  for (const answer of asked) await expect(answer).rejects.toThrow('read 0 failed');
  const again = cache.get();
  expect(reads.begun).toBe(2);
  reads.finish(1);
  expect(await again).toBe(1);
});
