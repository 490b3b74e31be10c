import fc from 'fast-check';
import { describeRefusedOverrides, type OverridePolicy, type OverrideUse, refusedOverrides } from '../../../shared/domain/overridePolicy';
import { parseOverrides } from '../../../shared/config/settings';
import { ConfigurationError } from '../../../shared/errors';
import { kindOf } from '../../../shared/kinds/registry';
import { GLUE_RESERVED_ARGUMENTS } from '../../../shared/kinds/glue/reservedArguments';

/** What a job may override of what its kind runs: deny by default, each setting allowed by the stage explicitly. */
const name = fc.stringMatching(/^--?[a-z][a-z0-9-]{0,12}$/);
const setting = fc.constantFrom('command', 'environment', 'arguments', 'taskRole', 'network');
const use: fc.Arbitrary<OverrideUse> = fc.record(
  { setting, field: fc.constant('f'), names: fc.option(fc.uniqueArray(name, { minLength: 1, maxLength: 4 }), { nil: undefined }) },
  { requiredKeys: ['setting', 'field'] },
);

describe('override policy', () => {
  test('a spec that overrides nothing is never refused, whatever the policy', () => {
    fc.assert(fc.property(fc.dictionary(setting, fc.boolean()), (settings) => refusedOverrides('ecs', [], { ecs: settings }).length === 0));
  });

  test('with no policy (the default) every override is refused, each name on its own', () => {
    fc.assert(
      fc.property(fc.array(use, { maxLength: 5 }), (uses) => {
        const refused = refusedOverrides('ecs', uses, {});
        expect(refused).toHaveLength(uses.reduce((n, u) => n + (u.names?.length ?? 1), 0));
      }),
    );
  });

  test('a list allows exactly the names it matches; true allows any name but the reserved ones', () => {
    fc.assert(
      fc.property(fc.uniqueArray(name, { minLength: 1, maxLength: 6 }), fc.integer({ min: 0, max: 6 }), (names, listed) => {
        const allowed = names.slice(0, listed);
        const uses = [{ setting: 'arguments', field: 'arguments', names }];
        expect(refusedOverrides('glue', uses, { glue: { arguments: allowed } }).map((r) => r.name)).toEqual(names.slice(listed));
        expect(refusedOverrides('glue', uses, { glue: { arguments: true } })).toEqual([]);
        expect(refusedOverrides('glue', uses, { glue: { arguments: false } }).map((r) => r.name)).toEqual(names);
      }),
    );
  });

  test("Glue's own parameters pass only when listed by their exact name: never by true or a pattern", () => {
    fc.assert(
      fc.property(fc.constantFrom(...GLUE_RESERVED_ARGUMENTS), (reserved) => {
        const uses = kindOf('glue').overrides!({
          kind: 'glue',
          id: 'j',
          pool: 'p',
          jobName: 'x',
          arguments: { [reserved]: 's3://attacker/evil.py' },
        } as never);
        const policies: OverridePolicy[] = [
          { glue: { arguments: true } },
          { glue: { arguments: ['--*', '*'] } },
          { glue: { arguments: [reserved.toUpperCase()] } },
        ];
        for (const policy of policies) expect(refusedOverrides('glue', uses, policy).map((r) => r.name)).toEqual([reserved]);
        expect(refusedOverrides('glue', uses, { glue: { arguments: [reserved] } })).toEqual([]);
      }),
    );
  });

  test('the reason names each refused override and the setting that would allow it', () => {
    const ecs = kindOf('ecs').overrides!({
      kind: 'ecs',
      id: 'j',
      pool: 'p',
      cluster: 'c',
      taskDefinition: 't',
      overrides: {
        taskRoleArn: 'arn:aws:iam::123456789012:role/sluice-admin',
        containerOverrides: [{ name: 'app', command: ['sh', '-c', 'curl x | sh'], environment: [{ name: 'LOG_LEVEL', value: 'debug' }] }],
      },
    } as never);
    const refused = refusedOverrides('ecs', ecs, { ecs: { environment: ['LOG_LEVEL'] } });
    expect(describeRefusedOverrides(refused)).toBe(
      'override overrides.containerOverrides[0].command is not allowed on this stage (set overrides.ecs.command: true to allow it); ' +
        'override overrides.taskRoleArn is not allowed on this stage (set overrides.ecs.taskRole: true to allow it)',
    );
  });

  test('the stage parameter: JSON of kinds to settings; anything else is a configuration error naming it', () => {
    expect(parseOverrides('{"glue":{"arguments":["--day"]},"ecs":{"network":true}}')).toEqual({
      glue: { arguments: ['--day'] },
      ecs: { network: true },
    });
    expect(() => parseOverrides('{"gleu":{"arguments":true}}')).toThrow(
      new ConfigurationError("OVERRIDES names no kind 'gleu' (kinds: appflow, glue, sfn, ecs, batch, callback)"),
    );
    expect(() => parseOverrides('{"ecs":{"command":"yes"}}')).toThrow(ConfigurationError);
    expect(() => parseOverrides('not json')).toThrow(/must be JSON/);
  });

  test("Ray jobs' own code parameters are Glue's own too: --pip-install, --s3-py-modules, --working-dir", () => {
    for (const name of ['--pip-install', '--s3-py-modules', '--working-dir']) {
      const uses = kindOf('glue').overrides!({
        kind: 'glue',
        id: 'j',
        pool: 'p',
        jobName: 'ray',
        arguments: { [name]: 's3://attacker/x.zip' },
      } as never);
      expect([name, refusedOverrides('glue', uses, { glue: { arguments: true } }).map((r) => r.name)]).toEqual([name, [name]]);
    }
  });

  test('environment: true lets in data, not the variables that load code or change identity (only by exact name)', () => {
    const envOf = (names: string[]) =>
      kindOf('ecs').overrides!({
        kind: 'ecs',
        id: 'j',
        pool: 'p',
        cluster: 'c',
        taskDefinition: 't',
        overrides: { containerOverrides: [{ name: 'app', environment: names.map((name) => ({ name, value: 'x' })) }] },
      } as never);
    const names = ['DAY', 'NODE_OPTIONS', 'LD_PRELOAD', 'JAVA_TOOL_OPTIONS', 'PYTHONPATH', 'AWS_ACCESS_KEY_ID', 'node_options'];
    expect(refusedOverrides('ecs', envOf(names), { ecs: { environment: true } }).map((r) => r.name)).toEqual(names.slice(1));
    expect(refusedOverrides('ecs', envOf(['NODE_OPTIONS']), { ecs: { environment: ['NODE_OPTIONS'] } })).toEqual([]);
    const batch = kindOf('batch').overrides!({
      kind: 'batch',
      id: 'j',
      pool: 'p',
      jobQueue: 'q',
      jobDefinition: 'd',
      containerOverrides: { environment: [{ name: 'LD_PRELOAD', value: '/tmp/x.so' }] },
    } as never);
    expect(refusedOverrides('batch', batch, { batch: { environment: true } }).map((r) => r.name)).toEqual(['LD_PRELOAD']);
  });

  test('a setting a kind does not have is a configuration error naming its settings (a misspelling would deny silently)', () => {
    expect(() => parseOverrides('{"ecs":{"enviroment":["LOG_LEVEL"]}}')).toThrow(
      new ConfigurationError(
        "OVERRIDES: ecs has no setting 'enviroment' (its settings: command, environment, resources, taskRole, executionRole, network)",
      ),
    );
    expect(() => parseOverrides('{"appflow":{"arguments":true}}')).toThrow(/appflow has no setting 'arguments' \(its settings: none\)/);
  });
});
