import fc from 'fast-check';
import { MAX_JOB_BYTES, parseJob } from '../../../shared/app/parseJob';
import { canonicalJson, encodeJobBody } from '../../../shared/domain/jobBody';
import { InvalidJobError } from '../../../shared/errors';

/**
 * A body Sluice wrote itself must always be readable by Sluice: every body it sends again (a retry, a wake-up, the
 * reconciler's and the loader's copies) is encodeJobBody of a spec parseJob accepted, and is delivered through parseJob
 * again. So for any body parseJob accepts, that encoding must fit the cap and parse back to the same spec.
 */

const bytes = (text: string) => Buffer.byteLength(text, 'utf8');

// Any UTF-16 unit (lone surrogates, U+FFFE / U+FFFF, control characters), astral characters, and plain text.
const anyText = fc.string({ unit: fc.oneof(fc.constantFrom('a', 'é', '€', '\u{1F600}', '\uFFFE', '\uD800', '\n', '"', '\\'), fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c))) });

/** Padding that takes the body to within a few hundred bytes of the cap, either side. */
const nearCap = (unit: string) => fc.integer({ min: -700, max: 100 }).map((slack) => unit.repeat(Math.max(0, Math.floor((MAX_JOB_BYTES + slack - 300) / bytes(unit)))));

const identity = fc.record(
  { id: fc.constantFrom('j-1', 'x'.repeat(128), 'org:acme.order-7'), pool: fc.constantFrom('default', 'etl', 'p'.repeat(128)) },
  { requiredKeys: [] },
);

const glue = fc.record({
  kind: fc.constant('glue'),
  jobName: fc.constantFrom('nightly', 'j'.repeat(255)),
  arguments: fc.tuple(fc.constantFrom('x', 'é', '€', '\u{1F600}'), anyText).chain(([unit, extra]) =>
    nearCap(unit).map((pad) => ({ '--pad': pad, '--extra': extra.replace(/[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD]/gu, '') })),
  ),
});

const callback = fc.record({
  kind: fc.constant('callback'),
  target: fc.constant({ lambda: 'sluice-worker' }),
  timeoutSeconds: fc.integer({ min: 1, max: 3600 }),
  // a payload is at most 32 KiB of JSON: the rest of the way to the cap is a second field's worth of odd text
  payload: fc.tuple(fc.jsonValue({ maxDepth: 2 }), anyText).map(([json, text]) => ({ json, text: text.repeat(50).slice(0, 4000) })),
});

const sfn = fc.record({
  kind: fc.constant('sfn'),
  stateMachineArn: fc.constant('arn:aws:states:us-east-1:123456789012:stateMachine:sluice-etl'),
  input: fc.tuple(fc.constantFrom('x', '\uFFFE', '\u{1F600}'), fc.jsonValue({ maxDepth: 2 })).chain(([unit, json]) =>
    nearCap(unit).map((pad) => ({ pad, json })),
  ),
});

/** How the sender wrote its JSON: compact, indented, or with every non-ASCII character escaped. */
const writing = fc.constantFrom('compact', 'indented', 'escaped');
const write = (value: unknown, how: string): string => {
  if (how === 'indented') return JSON.stringify(value, null, 1);
  const text = JSON.stringify(value);
  return how === 'escaped' ? text.replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`) : text;
};

describe('parseJob and encodeJobBody, near the cap', () => {
  test('any body that parses has an encoding that fits the cap and parses back to the same spec', () => {
    let accepted = 0;
    let refused = 0;
    fc.assert(
      fc.property(fc.tuple(identity, fc.oneof(glue, callback, sfn)), writing, ([ids, job], how) => {
        const body = write({ ...job, ...ids }, how);
        let spec;
        try {
          spec = parseJob(body, 'a1b2c3d4-5e6f-7a8b-9c0d-e1f2a3b4c5d6');
        } catch (error) {
          if (!(error instanceof InvalidJobError)) throw error;
          refused++;
          return;
        }
        accepted++;
        const encoded = encodeJobBody(spec);
        expect(bytes(encoded)).toBeLessThanOrEqual(MAX_JOB_BYTES);
        // Delivered again (any message id: the id is in it now), it is the same job, written the same way.
        const again = parseJob(encoded, 'another-message-id');
        expect(canonicalJson(again)).toBe(canonicalJson(spec));
        expect(encodeJobBody(again)).toBe(encoded);
      }),
      { numRuns: 300 },
    );
    // Both sides of the cap were met.
    expect(accepted).toBeGreaterThan(20);
    expect(refused).toBeGreaterThan(20);
  });
});
