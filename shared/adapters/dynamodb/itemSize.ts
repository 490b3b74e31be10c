/**
 * DynamoDB's item size, as its documentation computes it, for an item as the document client writes it (plain values,
 * undefined attributes removed). Pure: the adapters' tests and the in-memory fakes use it to hold items to the limit.
 *
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html: a string is its
 * UTF-8 bytes; a number about 1 byte per two significant digits, plus 1; a boolean or null 1 byte; a list or map 3 bytes
 * plus its elements, plus 1 byte per element; every attribute (and map entry) also counts its name's UTF-8 bytes.
 */

/** https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Constraints.html (Items): 400 KB, names included. */
export const MAX_ITEM_BYTES = 400 * 1024;

/** What DynamoDB answers (ValidationException) when a write would make an item larger than MAX_ITEM_BYTES. */
export const ITEM_TOO_LARGE_MESSAGE = 'Item size has exceeded the maximum allowed size';

export function itemSize(item: Record<string, unknown>): number {
  let size = 0;
  for (const [name, value] of Object.entries(item)) {
    if (value === undefined) continue;
    size += utf8Bytes(name) + valueSize(value);
  }
  return size;
}

function valueSize(value: unknown): number {
  if (value === null || typeof value === 'boolean') return 1;
  if (typeof value === 'string') return utf8Bytes(value);
  if (typeof value === 'number' || typeof value === 'bigint') return numberSize(String(value));
  if (value instanceof Uint8Array) return value.byteLength;
  if (value instanceof Set) return [...(value as Set<unknown>)].reduce<number>((sum, v) => sum + valueSize(v), 0);
  if (Array.isArray(value)) return 3 + value.reduce<number>((sum, v) => sum + 1 + valueSize(v), 0);
  if (typeof value === 'object') {
    let size = 3;
    for (const [name, v] of Object.entries(value as Record<string, unknown>)) {
      if (v === undefined) continue;
      size += 1 + utf8Bytes(name) + valueSize(v);
    }
    return size;
  }
  throw new TypeError(`no DynamoDB size for a ${typeof value}`);
}

/** Significant digits (leading and trailing zeros trimmed), 1 byte per two, plus 1. */
function numberSize(text: string): number {
  const digits = text.replace(/^-/, '').replace(/e.*$/i, '').replace('.', '').replace(/^0+/, '').replace(/0+$/, '');
  return 1 + Math.ceil(Math.max(1, digits.length) / 2);
}

function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}
