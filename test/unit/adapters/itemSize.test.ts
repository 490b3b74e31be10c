import { itemSize, MAX_ITEM_BYTES } from '../../../shared/adapters/dynamodb/itemSize';

/** DynamoDB's size rules (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html). */
describe('DynamoDB item size', () => {
  test('a string counts its UTF-8 bytes and its name', () => {
    expect(itemSize({ pk: 'abc' })).toBe(2 + 3);
    expect(itemSize({ é: 'é€' })).toBe(2 + 2 + 3);
  });

  test('a number: 1 byte per two significant digits, plus 1; booleans and null 1 byte', () => {
    expect(itemSize({ n: 5 })).toBe(1 + 2);
    expect(itemSize({ n: 1_767_225_600_000 })).toBe(1 + 1 + 4); // trailing zeros trimmed: 17672256, 8 digits
    expect(itemSize({ n: 1_767_225_612_345 })).toBe(1 + 1 + 7); // 13 digits
    expect(itemSize({ b: true, z: null })).toBe(2 + 2);
  });

  test('a list or map: 3 bytes, plus 1 byte an element, plus its elements (map keys included)', () => {
    expect(itemSize({ l: ['ab', 'c'] })).toBe(1 + 3 + (1 + 2) + (1 + 1));
    expect(itemSize({ m: { x: 'ab' } })).toBe(1 + 3 + (1 + 1 + 2));
    expect(itemSize({ l: [] })).toBe(1 + 3);
  });

  test('undefined attributes are not written (the document client removes them)', () => {
    expect(itemSize({ a: 'x', b: undefined })).toBe(2);
  });

  test('the limit is 400 KB of 1,024 bytes', () => {
    expect(MAX_ITEM_BYTES).toBe(409_600);
  });
});
