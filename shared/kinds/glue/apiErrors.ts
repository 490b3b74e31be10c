import { type AnyOperationErrors, CallRole, type OperationErrors, ReadTake, StartTake, StopTake } from '../apiErrors';

/**
 * Every error of the Glue calls the starter makes (the SDK's `@throws` of each command, the API reference, and the
 * errors every AWS API shares: shared/kinds/apiErrors.ts COMMON_ERRORS), and how Sluice takes each.
 */
const CLIENT = '@aws-sdk/client-glue';
const RUNS = 'https://docs.aws.amazon.com/glue/latest/dg/aws-glue-api-jobs-runs.html';
const COMMON = 'https://docs.aws.amazon.com/glue/latest/webapi/CommonErrors.html';

const DENIED = 'Sluice lacks a permission on the job: it stays wrong until IAM is fixed (never taken as gone)';

export const START_JOB_RUN: OperationErrors<typeof CallRole.Start> = {
  operation: 'StartJobRun',
  client: CLIENT,
  role: CallRole.Start,
  reference: `${RUNS}#aws-glue-api-jobs-runs-StartJobRun`,
  commonErrors: COMMON,
  errors: {
    ConcurrentRunsExceededException: { take: StartTake.Refused, why: "the job's own MaxConcurrentRuns is reached: refused, nothing started" },
    EntityNotFoundException: { take: StartTake.Permanent, why: 'the job does not exist' },
    InternalServiceException: { take: StartTake.Uncertain, why: 'a server fault: the run may have started' },
    InvalidInputException: { take: StartTake.Permanent, why: 'the input is invalid (a bad job name or argument): it fails the same way again' },
    OperationTimeoutException: { take: StartTake.Uncertain, why: 'the operation timed out: the run may have started' },
    ResourceNumberLimitExceededException: { take: StartTake.Refused, why: 'an account limit on runs is reached: refused, nothing started' },
    ThrottlingException: { take: StartTake.Refused, why: 'throttled: refused before anything ran' },
    AccessDeniedException: { take: StartTake.Permanent, why: DENIED },
  },
};

/** The search for the run an earlier StartJobRun may have made (StartOptions.mayHaveStarted). */
export const GET_JOB_RUNS: OperationErrors<typeof CallRole.Lookup> = {
  operation: 'GetJobRuns',
  client: CLIENT,
  role: CallRole.Lookup,
  reference: `${RUNS}#aws-glue-api-jobs-runs-GetJobRuns`,
  commonErrors: COMMON,
  errors: {
    EntityNotFoundException: { take: ReadTake.Gone, why: 'the job does not exist: no run of it exists either' },
    InternalServiceException: { take: ReadTake.Transient, why: 'a server fault: the search proves nothing, ask again' },
    InvalidInputException: { take: ReadTake.Permanent, why: "Sluice's request is invalid: asking again will not help" },
    OperationTimeoutException: { take: ReadTake.Transient, why: 'the operation timed out: ask again' },
    ThrottlingException: { take: ReadTake.Transient, why: 'throttled: ask again later' },
    AccessDeniedException: { take: ReadTake.Permanent, why: DENIED },
  },
};

export const GET_JOB_RUN: OperationErrors<typeof CallRole.Status> = {
  operation: 'GetJobRun',
  client: CLIENT,
  role: CallRole.Status,
  reference: `${RUNS}#aws-glue-api-jobs-runs-GetJobRun`,
  commonErrors: COMMON,
  errors: {
    EntityNotFoundException: { take: ReadTake.Gone, why: 'the run (or its job) does not exist: deleted, or dropped from the run history' },
    InternalServiceException: { take: ReadTake.Transient, why: 'a server fault: ask again later' },
    InvalidInputException: { take: ReadTake.Permanent, why: "Sluice's request is invalid: asking again will not help" },
    OperationTimeoutException: { take: ReadTake.Transient, why: 'the operation timed out: ask again' },
    ThrottlingException: { take: ReadTake.Transient, why: 'throttled: ask again later' },
    AccessDeniedException: { take: ReadTake.Permanent, why: DENIED },
  },
};

/**
 * A run BatchStopJobRun could not stop is not an exception: the answer lists it in `Errors` with an ErrorCode (the
 * starter takes a listed run as already ended, unless its code says to try again).
 */
export const BATCH_STOP_JOB_RUN: OperationErrors<typeof CallRole.Stop> = {
  operation: 'BatchStopJobRun',
  client: CLIENT,
  role: CallRole.Stop,
  reference: `${RUNS}#aws-glue-api-jobs-runs-BatchStopJobRun`,
  commonErrors: COMMON,
  errors: {
    InternalServiceException: { take: StopTake.Transient, why: 'a server fault: the run may still be going' },
    InvalidInputException: { take: StopTake.Permanent, why: "Sluice's request is invalid: it fails the same way again" },
    OperationTimeoutException: { take: StopTake.Transient, why: 'the operation timed out: the run may still be going' },
    EntityNotFoundException: { take: StopTake.AlreadyEnded, why: 'the job does not exist: nothing of it runs any more' },
    ThrottlingException: { take: StopTake.Transient, why: 'throttled: try again later' },
    AccessDeniedException: { take: StopTake.Permanent, why: DENIED },
  },
};

export const GLUE_API_ERRORS: readonly AnyOperationErrors[] = [START_JOB_RUN, GET_JOB_RUNS, GET_JOB_RUN, BATCH_STOP_JOB_RUN];
