import { conformanceOf } from '../../../shared/kinds/kindConformance';
import { JobSpecSchema, KINDS, kindOf } from '../../../shared/kinds/registry';
import { targetNameOf, targetNameOfBody } from '../../../shared/inspect/targetName';

describe("each kind names what a job starts (targetName): shown in lists, a set job's default key", () => {
  test.each(KINDS.map((k) => k.kind))('%s: the name its conformance spec starts', (kind) => {
    const spec = JobSpecSchema.parse(conformanceOf(kind).spec('j-1', 'sluice-partner-007'));
    expect(kindOf(kind).targetName(spec as never)).toBe('sluice-partner-007');
  });

  test.each([
    [{ kind: 'sfn', stateMachineArn: 'arn:aws:states:us-east-1:123456789012:stateMachine:sluice-billing:prod' }, 'sluice-billing:prod'],
    [{ kind: 'ecs', taskDefinition: 'arn:aws:ecs:us-east-1:123456789012:task-definition/sluice-etl:3' }, 'sluice-etl:3'],
    [{ kind: 'batch', jobDefinition: 'arn:aws:batch:us-east-1:123456789012:job-definition/sluice-render:7' }, 'sluice-render:7'],
    [{ kind: 'callback', target: { sqs: 'https://sqs.us-east-1.amazonaws.com/123456789012/sluice-work' } }, 'sluice-work'],
  ])('from an ARN or URL, the name: %j', (spec, name) => {
    expect(targetNameOf(spec.kind, spec)).toBe(name);
  });

  test('a kind this Sluice does not know, a spec its kind cannot name, a body that is no job: no name', () => {
    expect(targetNameOf('mainframe', { kind: 'mainframe', program: 'X' })).toBeUndefined();
    expect(targetNameOf('sfn', { kind: 'sfn' })).toBeUndefined();
    expect(targetNameOfBody('not json')).toBeUndefined();
    expect(targetNameOfBody('{"kind":"glue","jobName":"sluice-nightly"}')).toBe('sluice-nightly');
  });
});
