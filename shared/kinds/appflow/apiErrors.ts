import { type AnyOperationErrors, CallRole, type OperationErrors, ReadTake, StartTake, StopTake } from '../apiErrors';

/**
 * Every error of the AppFlow calls the starter makes (the SDK's `@throws` of each command, the API reference's
 * "Errors", and the errors every AWS API shares: shared/kinds/apiErrors.ts COMMON_ERRORS), and how Sluice takes each.
 */
const CLIENT = '@aws-sdk/client-appflow';
const API = 'https://docs.aws.amazon.com/appflow/1.0/APIReference';
const COMMON = `${API}/CommonErrors.html`;

const THROTTLED = 'throttled (HTTP 429): refused before anything ran';
const DENIED = 'AppFlow or Sluice lacks a permission: it stays wrong until IAM is fixed (never taken as gone)';

export const START_FLOW: OperationErrors<typeof CallRole.Start> = {
  operation: 'StartFlow',
  client: CLIENT,
  role: CallRole.Start,
  reference: `${API}/API_StartFlow.html`,
  commonErrors: COMMON,
  errors: {
    // Documented only as "a conflict when processing the request", not as a refusal: it proves nothing.
    ConflictException: { take: StartTake.Uncertain, why: 'a conflict while processing the request: whether the flow run started is not known' },
    InternalServerException: { take: StartTake.Uncertain, why: 'a server fault (500): the run may have started' },
    ResourceNotFoundException: { take: StartTake.Permanent, why: 'the flow does not exist (404)' },
    ServiceQuotaExceededException: { take: StartTake.Refused, why: 'a service quota is reached (402): refused, nothing started' },
    ThrottlingException: { take: StartTake.Refused, why: THROTTLED },
    ValidationException: { take: StartTake.Permanent, why: 'the request is invalid (a malformed flow name): it fails the same way again' },
    AccessDeniedException: { take: StartTake.Permanent, why: DENIED },
  },
};

export const DESCRIBE_FLOW_EXECUTION_RECORDS: OperationErrors<typeof CallRole.Status> = {
  operation: 'DescribeFlowExecutionRecords',
  client: CLIENT,
  role: CallRole.Status,
  reference: `${API}/API_DescribeFlowExecutionRecords.html`,
  commonErrors: COMMON,
  errors: {
    InternalServerException: { take: ReadTake.Transient, why: 'a server fault: ask again later' },
    ResourceNotFoundException: { take: ReadTake.Gone, why: 'the flow does not exist (deleted): neither its runs nor their events will be seen again' },
    ValidationException: { take: ReadTake.Permanent, why: "Sluice's request is invalid: asking again will not help" },
    ThrottlingException: { take: ReadTake.Transient, why: 'throttled: ask again later' },
    AccessDeniedException: { take: ReadTake.Permanent, why: DENIED },
  },
};

export const CANCEL_FLOW_EXECUTIONS: OperationErrors<typeof CallRole.Stop> = {
  operation: 'CancelFlowExecutions',
  client: CLIENT,
  role: CallRole.Stop,
  reference: `${API}/API_CancelFlowExecutions.html`,
  commonErrors: COMMON,
  errors: {
    AccessDeniedException: { take: StopTake.Permanent, why: DENIED },
    InternalServerException: { take: StopTake.Transient, why: 'a server fault: the run may still be going' },
    ResourceNotFoundException: { take: StopTake.AlreadyEnded, why: 'the flow does not exist: nothing of it runs any more' },
    ThrottlingException: { take: StopTake.Transient, why: 'throttled: try again later' },
    ValidationException: { take: StopTake.Permanent, why: "Sluice's request is invalid: it fails the same way again" },
  },
};

export const APPFLOW_API_ERRORS: readonly AnyOperationErrors[] = [START_FLOW, DESCRIBE_FLOW_EXECUTION_RECORDS, CANCEL_FLOW_EXECUTIONS];
