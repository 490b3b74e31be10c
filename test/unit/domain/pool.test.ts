import { freeSlots, isValidLimit, MAX_POOL_LIMIT, type PoolSnapshot } from '../../../shared/domain/pool';

const pool = (limit: number, holders: string[]): PoolSnapshot => ({ name: 'p', limit, inUse: holders.length });

describe('pool snapshot rules', () => {
  test('free slots: limit minus in use, never negative after a lowered limit', () => {
    expect(freeSlots(pool(3, ['a']))).toBe(2);
    expect(freeSlots(pool(2, ['a', 'b']))).toBe(0);
    expect(freeSlots(pool(1, ['a', 'b', 'c']))).toBe(0);
  });

  test.each([
    [0, true],
    [1, true],
    [MAX_POOL_LIMIT, true],
    [MAX_POOL_LIMIT + 1, false],
    [-1, false],
    [1.5, false],
    [Number.NaN, false],
    [Number.POSITIVE_INFINITY, false],
  ])('isValidLimit(%p) is %p', (limit, valid) => {
    expect(isValidLimit(limit)).toBe(valid);
  });
});
