import { JobSpecSchema } from '../../../shared/kinds/registry';

const glue = { id: 'etl.42', kind: 'glue', jobName: 'nightly etl', pool: 'etl' };
const withArguments = (args: Record<string, string>) => ({ ...glue, arguments: args });

function issuesOf(input: unknown): Array<{ path: PropertyKey[]; message: string }> {
  const result = JobSpecSchema.safeParse(input);
  expect(result.success).toBe(false);
  return result.error!.issues.map((i) => ({ path: i.path, message: i.message }));
}

describe('Glue arguments hold only what the Glue API accepts', () => {
  test.each([
    ['U+FFFF in a value', { '--a': 'x\uFFFF' }],
    ['U+FFFE in a value', { '--a': '\uFFFE' }],
    ['a lone high surrogate in a value', { '--a': 'cut \uD83D' }],
    ['a lone low surrogate in a value', { '--a': '\uDE00' }],
    ['NUL in a value', { '--a': 'a\u0000b' }],
    ['a control character in a value', { '--a': '\u001B[0m' }],
  ])('a value with %s is refused, naming the argument', (_what, args) => {
    expect(issuesOf(withArguments(args))).toEqual([
      { path: ['arguments', '--a'], message: expect.stringContaining('argument value has characters Glue rejects') },
    ]);
  });

  test.each([
    ['U+FFFF', '--a\uFFFF'],
    ['U+FFFE', '\uFFFE'],
    ['a lone surrogate', '--\uD800'],
    ['a control character', '--a\u0007'],
  ])('a name with %s is refused with a message that says why', (_what, key) => {
    expect(issuesOf(withArguments({ [key]: 'x' }))).toEqual([
      { path: ['arguments', key], message: expect.stringContaining('argument name must be 1-1024 characters Glue accepts') },
    ]);
  });

  test('an empty or 1025-character name is still refused', () => {
    expect(issuesOf(withArguments({ '': 'x' }))[0]!.message).toContain('argument name must be');
    expect(issuesOf(withArguments({ ['-'.repeat(1025)]: 'x' }))[0]!.message).toContain('argument name must be');
  });

  test('what Glue accepts passes: tabs, line breaks, U+FFFD, astral characters, the BMP edges', () => {
    const args = {
      '--multi': 'line 1\r\nline 2\tend',
      '--emoji \u{1F600}': 'a \u{1F600} b \u{10FFFF}',
      '--edges': '\u0020\uD7FF\uE000\uFFFD',
      '--empty': '',
    };
    expect(JobSpecSchema.parse(withArguments(args))).toEqual(withArguments(args));
  });

  test('a job name gets the same class without line breaks: astral characters pass, U+FFFF and surrogates do not', () => {
    expect(JobSpecSchema.safeParse({ ...glue, jobName: 'etl \u{1F600}' }).success).toBe(true);
    for (const jobName of ['etl\uFFFF', 'etl\uD83D', 'etl\nnext']) {
      expect(issuesOf({ ...glue, jobName })).toEqual([{ path: ['jobName'], message: 'jobName has characters Glue rejects' }]);
    }
  });
});
