import { maxRunSecondsEnv } from '../../../shared/config/settings';
import { ANY_RESOURCE, type IamStatement, type KindDefinition, mayNameAnyResource, rulesOf } from '../../../shared/kinds/kindDefinition';
import { KINDS } from '../../../shared/kinds/registry';
import { loadServiceDefinition, type ServiceDefinition } from '../../../local/infra/serviceDefinition';
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

const ROLE_OF = { acquirer: 'AcquirerRole', reconciler: 'ReconcilerRole' } as const;
const RELEASER = 'releaser';

/** The function a kind's events go to (events.subscriber, the releaser by default). */
const subscriberOf = (kind: KindDefinition) => kind.events.subscriber ?? RELEASER;
const roleOf = (definition: ServiceDefinition, fn: string) => String((definition.functions[fn] as { role?: string } | undefined)?.role);

/**
 * Statements of Sluice's own code (the table, its queues, its logs) and its guards (the Deny statements, whatever the
 * kinds grant): every other statement of a role is a kind's.
 */
const OWN_STATEMENTS = new Set([
  'OwnLogs',
  'Table',
  'HoldersIndex',
  'ConsumeJobQueue',
  'ConsumeCallbackQueue',
  'SendJobs',
  'FailedEvents',
  'SluiceEvents',
  'SetRuns',
  'DueIndex',
  'DenySluiceFunctions',
  'DenySluiceRoles',
  'DenyOtherStagesQueues',
  'DenyOwnQueues',
  'DenySluiceTables',
]);

function statementsOf(definition: ServiceDefinition, role: string): PolicyStatement[] {
  const policies = asList(
    definition.resources.Resources[role]?.Properties?.Policies as Array<{ PolicyDocument: { Statement: PolicyStatement[] } }>,
  );
  return policies.flatMap((p) => p.PolicyDocument.Statement);
}

/** The kind's statement as serverless print renders it: params resolved from params.default. */
function rendered(kind: KindDefinition, statement: IamStatement, params: Record<string, unknown>) {
  const render = (text: string) =>
    text.replace(/\$\{param:([^}]+)\}/g, (_, name: string) => {
      if (!(name in kind.iam.params)) throw new Error(`${kind.kind}: ${statement.sid} names param ${name} the kind does not declare`);
      return String(params[name]);
    });
  const resource = render(statement.resource);
  // `*` is written as itself, not through Fn::Sub (it names no parameter).
  const Resource = resource === ANY_RESOURCE ? ANY_RESOURCE : { 'Fn::Sub': resource };
  // A condition value naming `${...}` goes through Fn::Sub; any other is written as itself.
  const Condition =
    statement.condition &&
    Object.fromEntries(
      Object.entries(statement.condition).map(([operator, keys]) => [
        operator,
        Object.fromEntries(Object.entries(keys).map(([key, value]) => [key, value.includes('${') ? { 'Fn::Sub': render(value) } : value])),
      ]),
    );
  return { Sid: statement.sid, Effect: 'Allow', Action: [...statement.actions], Resource, ...(Condition && { Condition }) };
}

/** A stage's parameters as serverless print resolves them: its own over the defaults. */
const paramsOf = (definition: typeof dev, stage: string) => ({ ...definition.params!.default, ...definition.params![stage] });

test('each function listens to exactly the rules of the kinds whose events it takes, on every stage (its parameters in them)', () => {
  const subscribers = new Set([RELEASER, ...KINDS.map(subscriberOf)]);
  for (const [definition, stage] of [
    [dev, 'dev'],
    [local, 'local'],
  ] as const) {
    for (const fn of subscribers) {
      const expected = KINDS.filter((k) => subscriberOf(k) === fn).flatMap((k) => rulesOf(k, paramsOf(definition, stage)));
      const patterns = (definition.functions[fn]?.events ?? [])
        .filter((e) => 'eventBridge' in e)
        .map((e) => (e.eventBridge as { pattern: unknown }).pattern);
      expect([fn, patterns.length]).toEqual([fn, expected.length]);
      expect(patterns).toEqual(expect.arrayContaining(expected as object[]));
    }
  }
});

test("the AppFlow and Glue rules take only the flows and jobs Sluice may start; the local stage's take every name", () => {
  const names = (definition: typeof dev, stage: string) =>
    KINDS.filter((k) => k.kind === 'appflow' || k.kind === 'glue').map((k) => JSON.stringify(rulesOf(k, paramsOf(definition, stage))));
  expect(names(dev, 'dev').every((rule) => rule.includes('{"wildcard":"sluice-*"}'))).toBe(true);
  expect(names(local, 'local').every((rule) => rule.includes('{"wildcard":"*"}'))).toBe(true);
});

test('no two kinds listen to one event source (the releaser picks the parser by source)', () => {
  const sources = KINDS.flatMap((k) => [...new Set(k.events.rules.flatMap((r) => r.source))]);
  expect(new Set(sources).size).toBe(sources.length);
});

describe.each(KINDS.map((k) => [k.kind, k] as const))('%s', (_, kind) => {
  const roles: Array<[string, readonly IamStatement[]]> = [
    ...Object.keys(ROLE_OF).map((fn) => [fn, kind.iam[fn as keyof typeof ROLE_OF]] as [string, readonly IamStatement[]]),
    ...(kind.iam.subscriber ? [[subscriberOf(kind), kind.iam.subscriber] as [string, readonly IamStatement[]]] : []),
    // The releaser starts the job a released slot goes to (handOffStart: releaser): the kind's start statements.
    [RELEASER, kind.iam.acquirer],
  ];
  test.each(roles)("the %s role has its statements, scoped by the kind's name patterns", (fn, kindStatements) => {
    const statements = statementsOf(dev, roleOf(dev, fn));
    for (const statement of kindStatements) {
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

test("every statement of the functions' roles is Sluice's own or a registered kind's (none is left behind)", () => {
  const expected = new Map<string, string[]>();
  const add = (role: string, sids: string[]) => expected.set(role, [...(expected.get(role) ?? []), ...sids]);
  for (const fn of Object.keys(dev.functions)) add(roleOf(dev, fn), []);
  for (const kind of KINDS) {
    for (const [fn, role] of Object.entries(ROLE_OF))
      add(
        role,
        kind.iam[fn as keyof typeof ROLE_OF].map((s) => s.sid),
      );
    if (kind.iam.subscriber)
      add(
        roleOf(dev, subscriberOf(kind)),
        kind.iam.subscriber.map((s) => s.sid),
      );
    add(
      roleOf(dev, RELEASER),
      kind.iam.acquirer.map((s) => s.sid),
    );
  }
  expect(expected.size).toBe(Object.keys(dev.functions).length);
  for (const [role, sids] of expected) {
    const kindStatements = statementsOf(dev, role)
      .map((s) => String(s.Sid))
      .filter((sid) => !OWN_STATEMENTS.has(sid));
    expect([role, kindStatements.sort()]).toEqual([role, [...new Set(sids)].sort()]);
  }
});

test("every MAX_RUN_SECONDS_* variable is a registered kind's", () => {
  const variables = Object.keys(dev.provider.environment ?? {}).filter((v) => v.startsWith('MAX_RUN_SECONDS_'));
  expect(variables.sort()).toEqual(KINDS.map((k) => maxRunSecondsEnv(k.kind)).sort());
});
