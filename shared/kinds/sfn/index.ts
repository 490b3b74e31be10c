import { awsConsole, type KindDefinition, regionOfArn } from '../kindDefinition';
import { sfnEvents } from './events';
import { SFN_KIND, SfnJobSchema } from './spec';
import { SFN_API_ERRORS } from './apiErrors';

const STATE_MACHINES = 'arn:${AWS::Partition}:states:${AWS::Region}:${AWS::AccountId}:stateMachine:${param:allowedStateMachinePattern}';
/** Executions of those state machines, named by Sluice (`sluice-<id>`, `sluiceh-<hash>`). */
const EXECUTIONS = 'arn:${AWS::Partition}:states:${AWS::Region}:${AWS::AccountId}:execution:${param:allowedStateMachinePattern}:sluice*';

/**
 * Step Functions executions of STANDARD state machines: StartExecution named after the job id (idempotent by name),
 * DescribeExecution, StopExecution, Execution Status Change.
 */
export const sfn: KindDefinition<typeof SFN_KIND, 'StepFunctions', typeof SfnJobSchema> = {
  kind: SFN_KIND,
  key: 'StepFunctions',
  title: 'Step Functions executions',
  schema: SfnJobSchema,
  target: (spec) => spec.stateMachineArn,
  // NAME, or NAME:QUALIFIER for a version or alias
  targetName: (spec) => spec.stateMachineArn.split(':').slice(6).join(':'),
  // The state machine's name (a version or alias ARN adds `:<qualifier>`, which the IAM resource's `*` covers).
  names: (spec) => [
    { param: 'allowedStateMachinePattern', field: 'stateMachineArn', name: spec.stateMachineArn.split(':')[6] ?? spec.stateMachineArn },
  ],
  maxRunSeconds: 24 * 3600,
  events: sfnEvents,
  iam: {
    params: { allowedStateMachinePattern: 'sluice-*' },
    // DescribeStateMachine refuses EXPRESS machines; DescribeExecution reads the execution a repeated start names.
    acquirer: [
      { sid: 'StartExecutions', actions: ['states:StartExecution', 'states:DescribeStateMachine'], resource: STATE_MACHINES },
      { sid: 'FindExecutions', actions: ['states:DescribeExecution'], resource: EXECUTIONS },
    ],
    reconciler: [{ sid: 'ExecutionStatus', actions: ['states:DescribeExecution', 'states:StopExecution'], resource: EXECUTIONS }],
  },
  sdkService: 'sfn',
  apiErrors: SFN_API_ERRORS,
  /** An execution name stays taken for 90 days after the execution closed (API_StartExecution.html, name): a resumed start finds it that long. */
  startRetryWindowSeconds: 90 * 24 * 3600,
  // The run id is the execution's ARN, which names its region.
  consoleUrl: (_spec, runId, region) => awsConsole(regionOfArn(runId) ?? region, 'states/home', `#/v2/executions/details/${runId}`),
};
