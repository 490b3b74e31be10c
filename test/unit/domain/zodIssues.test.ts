import { closestKey, describeIssues, editDistance, unrecognizedKeysMessage } from '../../../shared/domain/zodIssues';
import { JobSpecSchema } from '../../../shared/kinds/registry';

const issuesOf = (spec: unknown) => {
  const parsed = JobSpecSchema.safeParse(spec);
  if (parsed.success) throw new Error('parsed');
  return describeIssues(parsed.error, '(spec)');
};

describe('validation messages people can act on', () => {
  test('an unknown key names the key it likely meant, by case or a small edit, at any depth', () => {
    expect(issuesOf({ kind: 'appflow', id: 'a', flowname: 'sluice-x' })).toBe(
      'flowName: required (string); (spec): Unrecognized key: "flowname" (did you mean "flowName"?)',
    );
    expect(issuesOf({ kind: 'glue', id: 'a', jobName: 'x', argumnets: {} })).toBe(
      '(spec): Unrecognized key: "argumnets" (did you mean "arguments"?)',
    );
    expect(
      issuesOf({
        kind: 'ecs',
        id: 'a',
        cluster: 'c',
        taskDefinition: 't',
        overrides: { containerOverrides: [{ name: 'm', enviroment: [] }] },
      }),
    ).toBe('overrides.containerOverrides.0: Unrecognized key: "enviroment" (did you mean "environment"?)');
  });

  test('no suggestion when nothing is close', () => {
    expect(issuesOf({ kind: 'glue', id: 'a', jobName: 'x', colour: 'red' })).toBe('(spec): Unrecognized key: "colour"');
  });

  test.each([
    ['flowname', 'flowName'],
    ['JOBNAME', 'jobName'],
    ['jobNmae', 'jobName'],
    ['jobNme', 'jobName'],
    ['pol', 'pool'],
    ['ab', undefined],
    ['weight', undefined],
  ])('closestKey(%j) among a spec’s keys: %j', (key, meant) => {
    expect(closestKey(key, ['id', 'kind', 'pool', 'flowName', 'jobName', 'arguments', 'notBefore'])).toBe(meant);
  });

  test('edit distance: inserts, deletes, substitutions, transpositions', () => {
    expect([editDistance('', 'abc'), editDistance('abc', 'abc'), editDistance('abc', 'acb'), editDistance('kitten', 'sitting')]).toEqual([
      3, 0, 1, 3,
    ]);
    expect(unrecognizedKeysMessage(['a', 'Pool'], ['pool'])).toBe('Unrecognized key: "a"; Unrecognized key: "Pool" (did you mean "pool"?)');
  });
});
