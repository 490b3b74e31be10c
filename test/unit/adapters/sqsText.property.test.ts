import fc from 'fast-check';
import { toSqsText, truncateUtf8 } from '../../../shared/adapters/sqs/sqsText';

const SQS_TEXT = /^[\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]*$/u;
const WELL_FORMED = /^(?:[^\uD800-\uDFFF]|[\uD800-\uDBFF][\uDC00-\uDFFF])*$/;
// Any UTF-16 string, lone surrogates and control characters included.
const anyText = fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)) });

describe('toSqsText', () => {
  test('keeps what SQS accepts, and replaces only what it refuses', () => {
    expect(toSqsText('ok \u{1F600} é\t\n')).toBe('ok \u{1F600} é\t\n');
    expect(toSqsText('a\uD83Db\u0000c\uFFFE')).toBe('a\uFFFDb\uFFFDc\uFFFD');
  });

  test('always gives text SQS accepts, of the same length', () => {
    fc.assert(
      fc.property(anyText, (value) => {
        const text = toSqsText(value);
        expect(text).toMatch(SQS_TEXT);
        expect(text).toHaveLength(value.length);
      }),
    );
  });
});

describe('truncateUtf8', () => {
  test('never cuts a character in two', () => {
    expect(truncateUtf8('\u{1F600}\u{1F600}', 7)).toBe('\u{1F600}');
    expect(truncateUtf8('éé', 3)).toBe('é');
    expect(truncateUtf8('abc', 3)).toBe('abc');
  });

  test('gives the longest prefix within the limit, well formed when the input is', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), fc.nat(64), (value, maxBytes) => {
        const cut = truncateUtf8(value, maxBytes);
        expect(value.startsWith(cut)).toBe(true);
        expect(Buffer.byteLength(cut)).toBeLessThanOrEqual(maxBytes);
        expect(cut).toMatch(WELL_FORMED);
        // One more character would not fit.
        const next = [...value.slice(cut.length)][0];
        if (next !== undefined) expect(Buffer.byteLength(cut + next)).toBeGreaterThan(maxBytes);
      }),
    );
  });
});
