import fc from 'fast-check';
import { encodeJobBody } from '../../../shared/domain/jobBody';
import type { JobSpec } from '../../../shared/kinds/registry';

/** What SQS accepts in a message body. */
const SQS_TEXT = /^[\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]*$/u;

// Any UTF-16 unit (lone surrogates and control characters included), any code point up to U+10FFFF, and the
// characters SQS refuses, often.
const anyUnit = fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c));
const anyCodePoint = fc.integer({ min: 0, max: 0x10ffff }).map((c) => String.fromCodePoint(c));
const refused = fc.constantFrom('\uFFFE', '\uFFFF', '\uD800', '\uDFFF', '\u0000', '\u001F', '\uD83D');
const anyText = fc.string({ unit: fc.oneof(anyUnit, anyCodePoint, refused) });

/** Spec-shaped values: the encoder must not depend on the schema having kept such characters out. */
const anySpec = fc.record({
  id: anyText,
  pool: anyText,
  kind: fc.constant('glue'),
  jobName: anyText,
  arguments: fc.dictionary(anyText, anyText, { maxKeys: 4 }),
}) as fc.Arbitrary<unknown> as fc.Arbitrary<JobSpec>;

describe('encodeJobBody', () => {
  test('U+FFFE, U+FFFF and lone surrogates become \\u escapes', () => {
    const spec = { id: 'j', pool: 'p', kind: 'glue', jobName: 'etl', arguments: { '--a': 'x\uFFFEy\uFFFF\uD800z' } } as JobSpec;
    const body = encodeJobBody(spec);
    expect(body).toBe('{"id":"j","pool":"p","kind":"glue","jobName":"etl","arguments":{"--a":"x\\ufffey\\uffff\\ud800z"}}');
    expect(JSON.parse(body)).toEqual(spec);
  });

  test('is JSON.stringify for a spec without such characters, astral characters kept raw', () => {
    const spec = { id: 'j', pool: 'p', kind: 'glue', jobName: 'Nächtlich \u{1F600}', arguments: { '--t': 'a\tb\nc' } } as JobSpec;
    expect(encodeJobBody(spec)).toBe(JSON.stringify(spec));
  });

  test('gives back the same spec, as text SQS accepts, for any string values', () => {
    fc.assert(
      fc.property(anySpec, (spec) => {
        const body = encodeJobBody(spec);
        expect(body).toMatch(SQS_TEXT);
        expect(JSON.parse(body)).toEqual(spec);
      }),
      { numRuns: 500 },
    );
  });
});
