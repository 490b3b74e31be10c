import { maxRunSecondsEnv } from '../../../shared/config/settings';
import { ANY_RESOURCE, type IamStatement, type KindDefinition, mayNameAnyResource } from '../../../shared/kinds/kindDefinition';
import { KINDS } from '../../../shared/kinds/registry';
import { loadServiceDefinition, type ServiceDefinition } from '../../../shared/local/infra/serviceDefinition';
import { asList, type PolicyStatement } from './cfn';

/**
 * serverless.yml against the kind registry (shared/kinds/registry.ts): the releaser's rules, the roles' job API
 * statements, the kinds' stage parameters and maximum run times. A kind added to the registry without its lines in
 * serverless.yml (or a line left behind after a kind changed) fails here. Read through `serverless print` (cached), so
 * this runs in seconds; the packaged template is checked in template.test.ts.
 */

let dev: ServiceDefinition & { params?: Record<string, Record<string, unknown>> };
let local: typeof dev;
beforeAll(async () => {
  [dev, local] = await Promise.all([loadServiceDefinition('dev'), loadServiceDefinition('local')]);
}, 60_000);

/** The roles each kind's statements go to: the releaser starts the job a released slot goes to (handOffStart). */
const ROLES_OF = { acquirer: ['AcquirerRole', 'ReleaserRole'], reconciler: ['ReconcilerRole'] } as const;
const ROLE_OF = Object.entries(ROLES_OF).flatMap(([fn, roles]) => roles.map((role) => [fn as keyof typeof ROLES_OF, role] as const));

function statementsOf(definition: ServiceDefinition, role: string): PolicyStatement[] {
  const policies = asList(
    definition.resources.Resources[role]?.Properties?.Policies as Array<{ PolicyDocument: { Statement: PolicyStatement[] } }>,
  );
  return policies.flatMap((p) => p.PolicyDocument.Statement);
}

/** The kind's statement as serverless print renders it: params resolved from params.default. */
function rendered(kind: KindDefinition, statement: IamStatement, params: Record<string, unknown>) {
  const resource = statement.resource.replace(/\$\{param:([^}]+)\}/g, (_, name: string) => {
    if (!(name in kind.iam.params)) throw new Error(`${kind.kind}: ${statement.sid} names param ${name} the kind does not declare`);
    return String(params[name]);
  });
  // `*` is written as itself, not through Fn::Sub (it names no parameter).
  const Resource = resource === ANY_RESOURCE ? ANY_RESOURCE : { 'Fn::Sub': resource };
  return { Sid: statement.sid, Effect: 'Allow', Action: [...statement.actions], Resource };
}

const serviceOf = (action: string) => action.split(':')[0]!;
const kindServices = new Set(KINDS.flatMap((k) => [...k.iam.acquirer, ...k.iam.reconciler].flatMap((s) => s.actions.map(serviceOf))));

test('the releaser listens to exactly the rules of the registered kinds, on every stage', () => {
  const expected = KINDS.flatMap((k) => k.events.rules);
  for (const definition of [dev, local]) {
    const patterns = (definition.functions.releaser!.events ?? []).map((e) => (e.eventBridge as { pattern: unknown }).pattern);
    expect(patterns).toHaveLength(expected.length);
    expect(patterns).toEqual(expect.arrayContaining(expected as object[]));
  }
});

test('no two kinds listen to one event source (the releaser picks the parser by source)', () => {
  const sources = KINDS.flatMap((k) => [...new Set(k.events.rules.flatMap((r) => r.source))]);
  expect(new Set(sources).size).toBe(sources.length);
});

describe.each(KINDS.map((k) => [k.kind, k] as const))('%s', (_, kind) => {
  test.each(ROLE_OF)("its %s statements are in %s, scoped by the kind's name patterns", (fn, role) => {
    const statements = statementsOf(dev, role);
    for (const statement of kind.iam[fn]) {
      expect(statements).toContainEqual(rendered(kind, statement, dev.params!.default!));
      // Every resource is a name pattern, but for the reads IAM cannot scope (UNSCOPABLE_READ_ACTIONS), which must say `*`.
      if (mayNameAnyResource(statement.actions)) expect(statement.resource).toBe(ANY_RESOURCE);
      else expect(statement.resource).not.toMatch(/^\*$|:\*$/);
      for (const action of statement.actions) expect(action).not.toContain('*');
    }
  });

  test("its stage parameters have the kind's defaults; its maximum run time is MAX_RUN_SECONDS_<KIND> on every stage", () => {
    for (const [name, value] of Object.entries(kind.iam.params)) expect([name, dev.params!.default![name]]).toEqual([name, value]);
    const variable = maxRunSecondsEnv(kind.kind);
    expect(dev.provider.environment?.[variable]).toBe(String(kind.maxRunSeconds));
    // Time is compressed locally: two minutes at most, so a leaked slot shows in a test.
    expect(Number(local.provider.environment?.[variable])).toBeLessThanOrEqual(120);
  });
});

test('every job API statement of the roles belongs to a registered kind (none is left behind)', () => {
  const fromKinds = KINDS.flatMap((k) => ROLE_OF.flatMap(([fn, role]) => k.iam[fn].map((s) => `${role} ${s.sid}`)));
  const jobApiStatements = [...new Set(ROLE_OF.map(([, role]) => role))].flatMap((role) =>
    statementsOf(dev, role)
      .filter((s) => asList(s.Action).some((a) => kindServices.has(serviceOf(a))))
      .map((s) => `${role} ${s.Sid}`),
  );
  expect(jobApiStatements.sort()).toEqual(fromKinds.sort());
});

test("every MAX_RUN_SECONDS_* variable is a registered kind's", () => {
  const variables = Object.keys(dev.provider.environment ?? {}).filter((v) => v.startsWith('MAX_RUN_SECONDS_'));
  expect(variables.sort()).toEqual(KINDS.map((k) => maxRunSecondsEnv(k.kind)).sort());
});
