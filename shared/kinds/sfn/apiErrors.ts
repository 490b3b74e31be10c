import { type AnyOperationErrors, CallRole, type OperationErrors, ReadTake, StartTake, StopTake } from '../apiErrors';

/**
 * Every error of the Step Functions calls the starter makes (the SDK's `@throws` of each command, the API reference,
 * and the errors every AWS API shares: shared/kinds/apiErrors.ts COMMON_ERRORS), and how Sluice takes each. Step
 * Functions names no server fault of its own: its 5xx are the common InternalFailure and ServiceUnavailable.
 */
const CLIENT = '@aws-sdk/client-sfn';
const API = 'https://docs.aws.amazon.com/step-functions/latest/apireference';
const COMMON = `${API}/CommonErrors.html`;

const KMS_DENIED = "the state machine's KMS key cannot be used by Sluice: it stays wrong until the key policy is fixed";
const KMS_STATE = "the state machine's KMS key is disabled or pending deletion";
const NOT_A_STATE_MACHINE = 'the ARN is not a valid state machine ARN: it fails the same way again';

/** Asked once per state machine before its first start (EXPRESS ones are refused): a read, it starts nothing. */
export const DESCRIBE_STATE_MACHINE: OperationErrors<typeof CallRole.Start> = {
  operation: 'DescribeStateMachine',
  client: CLIENT,
  role: CallRole.Start,
  reference: `${API}/API_DescribeStateMachine.html`,
  commonErrors: COMMON,
  errors: {
    InvalidArn: { take: StartTake.Permanent, why: NOT_A_STATE_MACHINE },
    KmsAccessDeniedException: { take: StartTake.Permanent, why: KMS_DENIED },
    KmsInvalidStateException: { take: StartTake.Permanent, why: KMS_STATE },
    KmsThrottlingException: { take: StartTake.Refused, why: 'KMS throttled the read: nothing started' },
    StateMachineDoesNotExist: { take: StartTake.Permanent, why: 'the state machine does not exist' },
    // A read that starts nothing: its server faults are refusals too.
    InternalFailure: { take: StartTake.Refused, why: 'a server fault on a read, before any start: nothing started' },
    ServiceUnavailable: { take: StartTake.Refused, why: 'the service is unavailable for a read, before any start: nothing started' },
  },
};

export const START_EXECUTION: OperationErrors<typeof CallRole.Start> = {
  operation: 'StartExecution',
  client: CLIENT,
  role: CallRole.Start,
  reference: `${API}/API_StartExecution.html`,
  commonErrors: COMMON,
  errors: {
    ExecutionAlreadyExists: {
      take: StartTake.Uncertain,
      why: "the execution name (the job's) is taken: an execution of this job exists",
      handled: "the starter answers with that execution, the job's own earlier one (its ARN follows from the name)",
    },
    ExecutionLimitExceeded: { take: StartTake.Refused, why: "the account's quota of open executions is reached: nothing started" },
    InvalidArn: { take: StartTake.Permanent, why: NOT_A_STATE_MACHINE },
    InvalidExecutionInput: { take: StartTake.Permanent, why: "the job's input is not valid JSON for an execution" },
    InvalidName: { take: StartTake.Permanent, why: 'the execution name is invalid' },
    KmsAccessDeniedException: { take: StartTake.Permanent, why: KMS_DENIED },
    KmsInvalidStateException: { take: StartTake.Permanent, why: KMS_STATE },
    KmsThrottlingException: { take: StartTake.Refused, why: 'KMS throttled the start: refused, nothing started' },
    StateMachineDeleting: { take: StartTake.Permanent, why: 'the state machine is being deleted' },
    StateMachineDoesNotExist: { take: StartTake.Permanent, why: 'the state machine does not exist' },
    ValidationException: { take: StartTake.Permanent, why: 'the request fails a constraint: it fails the same way again' },
  },
};

export const DESCRIBE_EXECUTION: OperationErrors<typeof CallRole.Status> = {
  operation: 'DescribeExecution',
  client: CLIENT,
  role: CallRole.Status,
  reference: `${API}/API_DescribeExecution.html`,
  commonErrors: COMMON,
  errors: {
    ExecutionDoesNotExist: {
      take: ReadTake.Gone,
      why: 'the execution does not exist: its state machine was deleted, or it closed more than 90 days ago',
    },
    InvalidArn: { take: ReadTake.Permanent, why: 'the execution ARN is invalid: asking again will not help' },
    KmsAccessDeniedException: { take: ReadTake.Permanent, why: KMS_DENIED },
    KmsInvalidStateException: { take: ReadTake.Permanent, why: KMS_STATE },
    KmsThrottlingException: { take: ReadTake.Transient, why: 'KMS throttled the read: ask again later' },
  },
};

export const STOP_EXECUTION: OperationErrors<typeof CallRole.Stop> = {
  operation: 'StopExecution',
  client: CLIENT,
  role: CallRole.Stop,
  reference: `${API}/API_StopExecution.html`,
  commonErrors: COMMON,
  errors: {
    ExecutionDoesNotExist: { take: StopTake.AlreadyEnded, why: 'the execution does not exist: nothing of it runs' },
    InvalidArn: { take: StopTake.Permanent, why: 'the execution ARN is invalid: it fails the same way again' },
    KmsAccessDeniedException: { take: StopTake.Permanent, why: KMS_DENIED },
    KmsInvalidStateException: { take: StopTake.Permanent, why: KMS_STATE },
    KmsThrottlingException: { take: StopTake.Transient, why: 'KMS throttled the stop: try again later' },
    ValidationException: { take: StopTake.Permanent, why: 'the request fails a constraint: it fails the same way again' },
  },
};

export const SFN_API_ERRORS: readonly AnyOperationErrors[] = [DESCRIBE_STATE_MACHINE, START_EXECUTION, DESCRIBE_EXECUTION, STOP_EXECUTION];
