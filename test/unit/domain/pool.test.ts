import { freeSlots, isHeldBy, isValidLimit, MAX_POOL_LIMIT, type PoolSnapshot } from '../../../shared/domain/pool';

const pool = (limit: number, holders: string[]): PoolSnapshot => ({
  name: 'p',
  limit,
  inUse: holders.length,
  holders: Object.fromEntries(holders.map((id) => [id, { kind: 'glue' as const, since: 0 }])),
});

describe('pool snapshot rules', () => {
  test('free slots: limit minus in use, never negative after a lowered limit', () => {
    expect(freeSlots(pool(3, ['a']))).toBe(2);
    expect(freeSlots(pool(2, ['a', 'b']))).toBe(0);
    expect(freeSlots(pool(1, ['a', 'b', 'c']))).toBe(0);
  });

  test('isHeldBy uses own properties only (a job called "constructor" or "toString" holds nothing by default)', () => {
    const p = pool(3, ['a']);
    expect(isHeldBy(p, 'a')).toBe(true);
    expect(isHeldBy(p, 'b')).toBe(false);
    expect(isHeldBy(p, 'constructor')).toBe(false);
    expect(isHeldBy(p, 'toString')).toBe(false);
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
