import { assertValidPattern, InvalidEventPatternError, matchesPattern, type EventPattern } from '../../../local/bus';

// The example event of the EventBridge docs (event patterns / content filtering).
const ec2Event = {
  version: '0',
  id: '6a7e8feb-b491-4cf7-a9f1-bf3703467718',
  'detail-type': 'EC2 Instance State-change Notification',
  source: 'aws.ec2',
  account: '111122223333',
  time: '2017-12-22T18:43:48Z',
  region: 'us-west-1',
  resources: ['arn:aws:ec2:us-west-1:123456789012:instance/i-1234567890abcdef0'],
  detail: { 'instance-id': 'i-1234567890abcdef0', state: 'terminated' },
};

const withDetail = (detail: Record<string, unknown>) => ({ ...ec2Event, detail });
const yes = (pattern: EventPattern, event: unknown = ec2Event) => expect(matchesPattern(pattern, event)).toBe(true);
const no = (pattern: EventPattern, event: unknown = ec2Event) => expect(matchesPattern(pattern, event)).toBe(false);

describe('exact values and nesting', () => {
  test('top-level fields and nested detail', () => {
    yes({ source: ['aws.ec2'], 'detail-type': ['EC2 Instance State-change Notification'], detail: { state: ['terminated'] } });
    no({ source: ['aws.ec2'], detail: { state: ['running'] } });
    no({ source: ['aws.s3'] });
  });

  test('a list of values is an OR; every field is an AND', () => {
    yes({ detail: { state: ['pending', 'terminated'] } });
    no({ detail: { state: ['pending', 'terminated'] }, region: ['eu-west-1'] });
  });

  test('matching is case-sensitive and exact', () => {
    no({ source: ['AWS.EC2'] });
    no({ source: ['aws'] });
  });

  test('an event array matches if any element matches (resources)', () => {
    yes({ resources: ['arn:aws:ec2:us-east-1:123456789012:instance/i-b188560f', ec2Event.resources[0]!] });
    no({ resources: ['arn:aws:ec2:us-east-1:123456789012:instance/i-b188560f'] });
  });

  test('numbers match by value, not as strings; booleans and null match exactly', () => {
    yes({ detail: { n: [300] } }, withDetail({ n: 3.0e2 }));
    no({ detail: { n: ['300'] } }, withDetail({ n: 300 }));
    no({ detail: { n: [300] } }, withDetail({ n: '300' }));
    yes({ detail: { ok: [true] } }, withDetail({ ok: true }));
    no({ detail: { ok: [true] } }, withDetail({ ok: 'true' }));
    // docs: null and empty strings
    yes({ detail: { responseElements: [null] } }, withDetail({ responseElements: null }));
    no({ detail: { responseElements: [null] } }, withDetail({}));
    yes({ detail: { eventVersion: [''] } }, withDetail({ eventVersion: '' }));
  });

  test('a leaf value list does not match an object, and a nested pattern does not match a string', () => {
    no({ detail: ['terminated'] });
    no({ source: { inner: ['aws.ec2'] } });
  });

  test('nested patterns on arrays of objects keep array consistency', () => {
    const event = withDetail({
      employees: [
        { firstName: 'John', lastName: 'Doe' },
        { firstName: 'Anna', lastName: 'Smith' },
      ],
    });
    yes({ detail: { employees: { firstName: ['Anna'], lastName: ['Smith'] } } }, event);
    no({ detail: { employees: { firstName: ['Anna'], lastName: ['Doe'] } } }, event);
  });
});

describe('string matchers', () => {
  test('prefix', () => {
    yes({ time: [{ prefix: '2017-12-22' }] });
    yes({ source: [{ prefix: 'aws.' }] });
    no({ source: [{ prefix: 'AWS.' }] });
    no({ detail: { n: [{ prefix: '3' }] } }, withDetail({ n: 300 }));
  });

  test('prefix and suffix with equals-ignore-case', () => {
    yes({ detail: { file: [{ prefix: { 'equals-ignore-case': 'img' } }] } }, withDetail({ file: 'IMG_1.PNG' }));
    yes({ detail: { file: [{ suffix: { 'equals-ignore-case': '.png' } }] } }, withDetail({ file: 'IMG_1.PNG' }));
    no({ detail: { file: [{ suffix: { 'equals-ignore-case': '.jpg' } }] } }, withDetail({ file: 'IMG_1.PNG' }));
  });

  test('suffix', () => {
    yes({ detail: { FileName: [{ suffix: '.png' }] } }, withDetail({ FileName: 'image.png' }));
    no({ detail: { FileName: [{ suffix: '.png' }] } }, withDetail({ FileName: 'image.PNG' }));
  });

  test('equals-ignore-case', () => {
    yes({ 'detail-type': [{ 'equals-ignore-case': 'ec2 instance state-change notification' }] });
    no({ 'detail-type': [{ 'equals-ignore-case': 'ec2 instance state-change' }] });
  });

  test('wildcard', () => {
    yes({ resources: [{ wildcard: 'arn:aws:ec2:*:instance/i-*' }] });
    no({ resources: [{ wildcard: 'arn:aws:s3:*' }] });
    yes({ detail: { key: [{ wildcard: 'dir/*.(png)' }] } }, withDetail({ key: 'dir/a.(png)' })); // regex characters are literal
  });

  // https://github.com/aws/event-ruler#wildcard-matching (EventBridge's matcher), the EventBridge content filtering page.
  test('wildcard: `*` matches any run of characters, none included, anywhere, any number of times', () => {
    const name = (value: unknown) => withDetail({ 'flow-name': value });
    const flows = (wildcard: string) => ({ detail: { 'flow-name': [{ wildcard }] } });
    yes(flows('sluice-*'), name('sluice-accounts'));
    yes(flows('sluice-*'), name('sluice-'));
    no(flows('sluice-*'), name('crm-accounts'));
    no(flows('sluice-*'), name('Sluice-accounts')); // case-sensitive
    no(flows('sluice-*'), name('xsluice-accounts')); // the whole value
    yes(flows('*'), name(''));
    yes(flows('*'), name('anything at all'));
    yes(flows('*-nightly-*'), name('crm-nightly-2'));
    no(flows('*-nightly-*'), name('crm-nightly'));
    yes(flows('a*b*c'), name('abc'));
    yes(flows('a*b*c'), name('a-b-b-c'));
    no(flows('a*b*c'), name('a-c'));
    // Strings only: a number, a missing field, an object never match.
    no(flows('*'), name(42));
    no(flows('*'), withDetail({}));
    no(flows('*'), name({ inner: 'x' }));
  });

  test('wildcard: `?` is no wildcard (unlike an IAM pattern), `\\*` is a literal asterisk, `\\\\` a literal backslash', () => {
    const name = (value: string) => withDetail({ jobName: value });
    const jobs = (wildcard: string) => ({ detail: { jobName: [{ wildcard }] } });
    yes(jobs('etl-?'), name('etl-?'));
    no(jobs('etl-?'), name('etl-1'));
    yes(jobs('a\\*b'), name('a*b'));
    no(jobs('a\\*b'), name('axb'));
    yes(jobs('a\\\\*'), name('a\\tail'));
    no(jobs('a\\\\*'), name('atail'));
  });

  test.each([
    ['two wildcards in a row', 'sluice-**'],
    ['a backslash before another character', 'sluice\\-*'],
    ['a trailing backslash', 'sluice-\\'],
    ['a number', 42],
  ])('wildcard: %s is refused, as PutRule refuses it', (_what, wildcard) => {
    expect(() => assertValidPattern({ detail: { jobName: [{ wildcard }] } })).toThrow(InvalidEventPatternError);
    expect(() => assertValidPattern({ detail: { jobName: [{ 'anything-but': { wildcard } }] } })).toThrow(InvalidEventPatternError);
  });
});

describe('anything-but', () => {
  test('a value, a list, a number', () => {
    yes({ detail: { state: [{ 'anything-but': 'initializing' }] } });
    no({ detail: { state: [{ 'anything-but': 'terminated' }] } });
    yes({ detail: { state: [{ 'anything-but': ['stopped', 'overloaded'] }] } });
    no({ detail: { state: [{ 'anything-but': ['stopped', 'terminated'] }] } });
    yes({ detail: { x: [{ 'anything-but': 100 }] } }, withDetail({ x: 101 }));
    no({ detail: { x: [{ 'anything-but': [100, 200] }] } }, withDetail({ x: 200 }));
  });

  test('prefix, suffix and equals-ignore-case', () => {
    yes({ detail: { state: [{ 'anything-but': { prefix: 'init' } }] } });
    no({ detail: { state: [{ 'anything-but': { prefix: 'term' } }] } });
    no({ detail: { state: [{ 'anything-but': { suffix: 'ated' } }] } });
    no({ detail: { state: [{ 'anything-but': { 'equals-ignore-case': ['RUNNING', 'TERMINATED'] } }] } });
    yes({ detail: { state: [{ 'anything-but': { 'equals-ignore-case': 'RUNNING' } }] } });
  });

  test('does not match a missing field', () => {
    no({ detail: { missing: [{ 'anything-but': 'x' }] } });
  });

  test('on an array, matches if some element is not excluded', () => {
    yes({ detail: { tags: [{ 'anything-but': 'a' }] } }, withDetail({ tags: ['a', 'b'] }));
    no({ detail: { tags: [{ 'anything-but': 'a' }] } }, withDetail({ tags: ['a'] }));
  });
});

describe('exists', () => {
  test('true matches a present leaf, false a missing one', () => {
    yes({ detail: { state: [{ exists: true }] } });
    no({ detail: { state: [{ exists: false }] } });
    yes({ detail: { 'c-count': [{ exists: false }] } });
    no({ detail: { 'c-count': [{ exists: true }] } });
    yes({ missing: { deeper: [{ exists: false }] } });
  });

  test('works on leaf nodes only', () => {
    const event = withDetail({ 'c-count': { c1: 100 } });
    no({ detail: { 'c-count': [{ exists: true }] } }, event);
    yes({ detail: { 'c-count': { c1: [{ exists: true }] } } }, event);
  });
});

describe('numeric', () => {
  // docs: numeric matching example
  const event = withDetail({ 'c-count': 5, 'd-count': 7, 'x-limit': 301.8 });

  test('ranges and equality', () => {
    yes(
      {
        detail: {
          'c-count': [{ numeric: ['>', 0, '<=', 5] }],
          'd-count': [{ numeric: ['<', 10] }],
          'x-limit': [{ numeric: ['=', 3.018e2] }],
        },
      },
      event,
    );
    no({ detail: { 'c-count': [{ numeric: ['>', 0, '<', 5] }] } }, event);
    no({ detail: { 'd-count': [{ numeric: ['>=', 8] }] } }, event);
  });

  test('does not match strings or missing fields', () => {
    no({ detail: { n: [{ numeric: ['>', 0] }] } }, withDetail({ n: '5' }));
    no({ detail: { n: [{ numeric: ['>', 0] }] } }, event);
  });
});

describe('$or', () => {
  test('any alternative may match, alongside other fields', () => {
    const event = withDetail({ 'c-count': 9, 'd-count': 7 });
    const pattern = {
      source: ['aws.ec2'],
      detail: { $or: [{ 'c-count': [{ numeric: ['>', 0, '<=', 5] }] }, { 'd-count': [{ numeric: ['<', 10] }] }] },
    };
    yes(pattern, event);
    no(pattern, withDetail({ 'c-count': 9, 'd-count': 11 }));
    no({ ...pattern, source: ['aws.s3'] }, event);
  });

  test('at the top level', () => {
    yes({ $or: [{ source: ['aws.s3'] }, { 'detail-type': [{ prefix: 'EC2' }] }] });
    no({ $or: [{ source: ['aws.s3'] }, { 'detail-type': [{ prefix: 'S3' }] }] });
  });
});

describe("Sluice's own rules", () => {
  const appflowEnd = {
    ...ec2Event,
    source: 'aws.appflow',
    'detail-type': 'AppFlow End Flow Run Report',
    detail: { 'flow-name': 'f1', 'execution-id': 'e1', status: 'Execution Successful' },
  };
  test('the releaser rule takes AppFlow end reports, not start reports', () => {
    const rule = { source: ['aws.appflow'], 'detail-type': ['AppFlow End Flow Run Report'] };
    yes(rule, appflowEnd);
    no(rule, { ...appflowEnd, 'detail-type': 'AppFlow Start Flow Run Report' });
  });
  test('Glue terminal states', () => {
    const rule = {
      source: ['aws.glue'],
      'detail-type': ['Glue Job State Change'],
      detail: { state: ['SUCCEEDED', 'FAILED', 'TIMEOUT', 'STOPPED'] },
    };
    yes(rule, { ...ec2Event, source: 'aws.glue', 'detail-type': 'Glue Job State Change', detail: { jobRunId: 'jr_1', state: 'FAILED' } });
    no(rule, { ...ec2Event, source: 'aws.glue', 'detail-type': 'Glue Job State Change', detail: { jobRunId: 'jr_1', state: 'RUNNING' } });
  });
});

describe('invalid patterns are rejected, as PutRule rejects them', () => {
  test.each<[string, unknown]>([
    ['an empty pattern', {}],
    ['a bare string instead of a list', { source: 'aws.ec2' }],
    ['an empty list', { source: [] }],
    ['an unknown matcher', { source: [{ 'starts-with': 'aws' }] }],
    ['cidr (not supported locally)', { detail: { ip: [{ cidr: '10.0.0.0/24' }] } }],
    ['a matcher with two keys', { source: [{ prefix: 'a', suffix: 'b' }] }],
    ['a bad numeric operator', { detail: { n: [{ numeric: ['!=', 1] }] } }],
    ['numeric = in a range', { detail: { n: [{ numeric: ['=', 1, '<', 2] }] } }],
    ['exists with a string', { detail: { n: [{ exists: 'yes' }] } }],
    ['$or with one alternative', { $or: [{ source: ['a'] }] }],
    ['anything-but with an object list', { source: [{ 'anything-but': [{ prefix: 'a' }] }] }],
  ])('%s', (_, pattern) => {
    expect(() => assertValidPattern(pattern)).toThrow(InvalidEventPatternError);
    expect(() => matchesPattern(pattern as EventPattern, ec2Event)).toThrow(InvalidEventPatternError);
  });
});
