import fc from 'fast-check';
import { jobIdOfName, nameOfJob } from '../../../shared/kinds/runNames';

/** Job ids as the schema accepts them: 1-128 of letters, digits, '.', '_', ':', '-', the first alphanumeric. */
const idChar = fc.constantFrom(...'abcXYZ019._:-'.split(''));
const jobId = fc.tuple(fc.constantFrom('a', 'Z', '7'), fc.array(idChar, { maxLength: 127 })).map(([first, rest]) => first + rest.join(''));

const RULES = [
  { what: 'Batch job names and ECS startedBy', maxLength: 128, allowed: /[A-Za-z0-9_-]/ },
  { what: 'ECS client tokens', maxLength: 64, allowed: /[!-~]/ },
];

describe.each(RULES)('names derived from job ids: $what', (rules) => {
  const valid = new RegExp(`^sluice(${rules.allowed.source})+$`);

  test('every id gets a name the API accepts, starting with sluice', () => {
    fc.assert(
      fc.property(jobId, (id) => {
        const name = nameOfJob(id, rules);
        expect(name.length).toBeLessThanOrEqual(rules.maxLength);
        expect(name).toMatch(valid);
      }),
    );
  });

  test('two ids never share a name, and one id always gets the same one', () => {
    fc.assert(
      fc.property(jobId, jobId, (a, b) => {
        expect(nameOfJob(a, rules)).toBe(nameOfJob(a, rules));
        if (a !== b) expect(nameOfJob(a, rules)).not.toBe(nameOfJob(b, rules));
      }),
    );
    // Ids that sanitize and cut to the same readable part still differ by their hash.
    const long = 'q'.repeat(rules.maxLength);
    expect(nameOfJob(`${long}:1`, rules)).not.toBe(nameOfJob(`${long}:2`, rules));
    expect(nameOfJob('org:acme', rules)).not.toBe(nameOfJob('org_acme', rules));
  });

  test('a plain name gives its id back; a hashed one gives none', () => {
    fc.assert(
      fc.property(jobId, (id) => {
        const name = nameOfJob(id, rules);
        expect(jobIdOfName(name)).toBe(name.startsWith('sluice-') ? id : undefined);
      }),
    );
  });
});
