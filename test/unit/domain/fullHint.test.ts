import { FULL_HINT_MS, FullHints } from '../../../shared/domain/fullHint';

const full = { name: 'p', limit: 2, inUse: 2 };

describe('FullHints', () => {
  test('a pool seen full is full for the next arrivals until the hint is stale', () => {
    const hints = new FullHints();
    hints.noteFull('p', full, 1, 1000);
    expect(hints.fullCounter('p', 1, 1000)).toEqual(full);
    expect(hints.fullCounter('p', 1, 1000 + FULL_HINT_MS - 1)).toEqual(full);
    expect(hints.fullCounter('p', 1, 1000 + FULL_HINT_MS)).toBeUndefined();
    expect(hints.fullCounter('q', 1, 1000)).toBeUndefined();
  });

  test('room seen (a take went through) forgets it', () => {
    const hints = new FullHints();
    hints.noteFull('p', full, 1, 0);
    hints.forget('p');
    expect(hints.fullCounter('p', 1, 0)).toBeUndefined();
  });

  test('only waiting is decided on a hint: a counter with room, or a limit the job is too heavy for, is not one', () => {
    const hints = new FullHints();
    hints.noteFull('p', { name: 'p', limit: 2, inUse: 1 }, 1, 0);
    expect(hints.fullCounter('p', 1, 0)).toBeUndefined();
    hints.noteFull('p', { name: 'p', limit: 2, inUse: 0 }, 3, 0);
    expect(hints.fullCounter('p', 3, 0)).toBeUndefined();
    // Full for a heavier job than the one that saw it: still full for it, unless the limit could never hold it.
    hints.noteFull('p', { name: 'p', limit: 4, inUse: 3 }, 2, 0);
    expect(hints.fullCounter('p', 2, 0)).toBeDefined();
    expect(hints.fullCounter('p', 5, 0)).toBeUndefined();
    // A paused pool (limit 0) is full for every job.
    hints.noteFull('z', { name: 'z', limit: 0, inUse: 0 }, 1, 0);
    expect(hints.fullCounter('z', 1, 0)).toBeDefined();
  });
});
