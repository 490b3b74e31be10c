import { consoleUrlOf } from '../../../shared/inspect/consoleUrl';
import { KINDS } from '../../../shared/kinds/registry';

const R = 'eu-west-1';

test("each kind's run links to its page in the AWS console of the region", () => {
  expect(consoleUrlOf('glue', { kind: 'glue', id: 'j', jobName: 'nightly' }, 'jr_abc', R)).toBe(
    'https://eu-west-1.console.aws.amazon.com/gluestudio/home?region=eu-west-1#/job/nightly/run/jr_abc',
  );
  expect(consoleUrlOf('appflow', { kind: 'appflow', id: 'j', flowName: 'accounts' }, 'e-1', R)).toBe(
    'https://eu-west-1.console.aws.amazon.com/appflow/home?region=eu-west-1#/details/accounts?tab=runHistory',
  );
  // The execution's and the task's ARNs name their region: it wins over the SDK's.
  const execution = 'arn:aws:states:us-east-2:123456789012:execution:sluice-etl:sluice-j';
  expect(
    consoleUrlOf(
      'sfn',
      { kind: 'sfn', id: 'j', stateMachineArn: 'arn:aws:states:us-east-2:123456789012:stateMachine:sluice-etl' },
      execution,
      R,
    ),
  ).toBe(`https://us-east-2.console.aws.amazon.com/states/home?region=us-east-2#/v2/executions/details/${execution}`);
  expect(
    consoleUrlOf(
      'ecs',
      { kind: 'ecs', id: 'j', cluster: 'sluice-c', taskDefinition: 'sluice-t:3' },
      'arn:aws:ecs:eu-west-1:123456789012:task/sluice-c/0f1e2d',
      R,
    ),
  ).toBe('https://eu-west-1.console.aws.amazon.com/ecs/v2/clusters/sluice-c/tasks/0f1e2d/configuration?region=eu-west-1');
  expect(consoleUrlOf('batch', { kind: 'batch', id: 'j', jobQueue: 'q', jobDefinition: 'd' }, '5a4b-11', R)).toBe(
    'https://eu-west-1.console.aws.amazon.com/batch/home?region=eu-west-1#jobs/detail/5a4b-11',
  );
});

test('no link for a kind without a console page, a kind this Sluice does not know, or a spec it cannot read', () => {
  expect(consoleUrlOf('callback', { kind: 'callback', id: 'j', target: { sqs: 'q' } }, 'r', R)).toBeUndefined();
  expect(consoleUrlOf('newkind', { kind: 'newkind' }, 'r', R)).toBeUndefined();
  expect(consoleUrlOf('glue', undefined, 'r', R)).toBeUndefined();
});

test('names are encoded: a run id or name cannot end the path or start a query of its own', () => {
  expect(consoleUrlOf('glue', { kind: 'glue', id: 'j', jobName: 'a/b?c#d' }, 'jr_1&x', R)).toBe(
    'https://eu-west-1.console.aws.amazon.com/gluestudio/home?region=eu-west-1#/job/a%2Fb%3Fc%23d/run/jr_1%26x',
  );
  for (const kind of KINDS) {
    const url = kind.consoleUrl?.({} as never, 'arn:aws:x:eu-west-1:1:task/c/t', R);
    if (url !== undefined) expect(url).toMatch(/^https:\/\/eu-west-1\.console\.aws\.amazon\.com\//);
  }
});
