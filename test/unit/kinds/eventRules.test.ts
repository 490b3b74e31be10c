import { appflow } from '../../../shared/kinds/appflow';
import { envelope } from '../../../shared/kinds/kindConformance';
import { glue } from '../../../shared/kinds/glue';
import { rulesOf } from '../../../shared/kinds/kindDefinition';
import { matchesPattern } from '../../../local/bus';

/**
 * The AppFlow and Glue rules take only the flows and jobs Sluice may start: the event carries the name (AppFlow's
 * `flow-name`, Glue's `jobName`), matched with EventBridge's wildcard by the same stage parameter IAM scopes starts with
 * (allowedFlowPattern, allowedGlueJobPattern). The account's other flows and jobs never invoke the releaser.
 */

const appflowEnd = (flow: string) =>
  envelope('aws.appflow', 'AppFlow End Flow Run Report', { 'flow-name': flow, 'execution-id': 'e-1', status: 'Execution Successful' });
const glueEnd = (job: string) => envelope('aws.glue', 'Glue Job State Change', { jobName: job, jobRunId: 'jr_1', state: 'SUCCEEDED' });
const matched = (rules: readonly object[], event: unknown) => rules.filter((r) => matchesPattern(r as never, event)).length;

test.each([
  ['AppFlow', appflow, appflowEnd],
  ['Glue', glue, glueEnd],
] as const)('%s: with the default pattern (sluice-*) only its own names match; another pattern takes its names', (_what, kind, end) => {
  expect(matched(rulesOf(kind), end('sluice-accounts'))).toBe(1);
  expect(matched(rulesOf(kind), end('crm-accounts'))).toBe(0);
  expect(matched(rulesOf(kind), end('Sluice-accounts'))).toBe(0);
  const param = Object.keys(kind.iam.params)[0]!;
  expect(matched(rulesOf(kind, { [param]: 'crm-*' }), end('crm-accounts'))).toBe(1);
  expect(matched(rulesOf(kind, { [param]: 'crm-*' }), end('sluice-accounts'))).toBe(0);
  expect(matched(rulesOf(kind, { [param]: '*' }), end('anything'))).toBe(1);
});

test('a rule naming a parameter its kind does not declare, or one without a value, is an error', () => {
  const bogus = {
    ...appflow,
    events: { ...appflow.events, rules: [{ source: ['x'], 'detail-type': ['y'], detail: { n: ['${param:other}'] } }] },
  };
  expect(() => rulesOf(bogus)).toThrow(/param other the kind does not declare/);
  expect(() => rulesOf(appflow, {})).toThrow(/no value for param allowedFlowPattern/);
});
