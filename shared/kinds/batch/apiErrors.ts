import { type AnyOperationErrors, CallRole, type ErrorEntry, type OperationErrors, ReadTake, StartTake, StopTake } from '../apiErrors';

/**
 * Every error of the AWS Batch calls the starter makes (the SDK's `@throws` of each command, the API reference, and
 * the errors every AWS API shares: shared/kinds/apiErrors.ts COMMON_ERRORS), and how Sluice takes each. Batch models
 * two exceptions: ClientException (HTTP 400: a bad or inactive queue or definition, a bad parameter, a missing
 * permission) and ServerException (HTTP 500). Its throttling is TooManyRequestsException (HTTP 429), which the SDK
 * does not model. Batch refuses nothing for capacity: a job waits in its queue (RUNNABLE) until compute is there.
 */
const CLIENT = '@aws-sdk/client-batch';
const API = 'https://docs.aws.amazon.com/batch/latest/APIReference';
const COMMON = `${API}/CommonErrors.html`;

/** Batch's throttling: "Too Many Requests (Service: AWSBatch; Status Code: 429; Error Code: TooManyRequestsException)". */
const TOO_MANY_REQUESTS = {
  documentedAt: 'https://repost.aws/knowledge-center/aws-batch-requests-error',
  http: 429,
} as const;

const throttled = <T>(take: T, why: string): ErrorEntry<T> => ({ take, why, ...TOO_MANY_REQUESTS });

export const SUBMIT_JOB: OperationErrors<typeof CallRole.Start> = {
  operation: 'SubmitJob',
  client: CLIENT,
  role: CallRole.Start,
  reference: `${API}/API_SubmitJob.html`,
  commonErrors: COMMON,
  errors: {
    ClientException: {
      take: StartTake.Permanent,
      why: 'a client error: a bad or inactive job queue or definition, a bad parameter, a missing permission',
    },
    ServerException: { take: StartTake.Uncertain, why: 'a server fault: the job may have been submitted' },
    TooManyRequestsException: throttled(StartTake.Refused, 'throttled (HTTP 429): refused, nothing submitted'),
  },
};

/**
 * The search for the job an earlier SubmitJob may have made (ListJobs by the job's name). Batch lists a job only for
 * about a day after it ended, so a search can prove nothing once that long has passed since the first start request:
 * retryForSeconds is bounded by the kind's startRetryWindowSeconds (shared/kinds/batch/index.ts).
 */
export const LIST_JOBS: OperationErrors<typeof CallRole.Lookup> = {
  operation: 'ListJobs',
  client: CLIENT,
  role: CallRole.Lookup,
  reference: `${API}/API_ListJobs.html`,
  commonErrors: COMMON,
  errors: {
    // Also a job queue that does not exist: the submit that follows then fails with it, permanently.
    ClientException: { take: ReadTake.Permanent, why: "a client error (Sluice's request, the queue, a permission): asking again will not help" },
    ServerException: { take: ReadTake.Transient, why: 'a server fault: the search proves nothing, ask again' },
    TooManyRequestsException: throttled(ReadTake.Transient, 'throttled: ask again later'),
  },
};

/** A job DescribeJobs does not know is no exception: it is left out of the answer, which the starter takes as gone. */
export const DESCRIBE_JOBS: OperationErrors<typeof CallRole.Status> = {
  operation: 'DescribeJobs',
  client: CLIENT,
  role: CallRole.Status,
  reference: `${API}/API_DescribeJobs.html`,
  commonErrors: COMMON,
  errors: {
    ClientException: { take: ReadTake.Permanent, why: "a client error (Sluice's request or permissions): asking again will not help" },
    ServerException: { take: ReadTake.Transient, why: 'a server fault: ask again later' },
    TooManyRequestsException: throttled(ReadTake.Transient, 'throttled: ask again later'),
  },
};

export const TERMINATE_JOB: OperationErrors<typeof CallRole.Stop> = {
  operation: 'TerminateJob',
  client: CLIENT,
  role: CallRole.Stop,
  reference: `${API}/API_TerminateJob.html`,
  commonErrors: COMMON,
  errors: {
    ClientException: {
      take: StopTake.Permanent,
      why: "a client error (Sluice's request or permissions): the job may still run",
      // A job Batch no longer keeps (it ended more than a day ago).
      byMessage: [
        {
          match: /not found|does not exist/i,
          example: 'Job 4c7599ae-0a82-49aa-ba5a-4727fcce14a8 not found',
          take: StopTake.AlreadyEnded,
          why: 'Batch no longer knows the job: it ended',
        },
      ],
    },
    ServerException: { take: StopTake.Transient, why: 'a server fault: the job may still run' },
    TooManyRequestsException: throttled(StopTake.Transient, 'throttled: try again later'),
  },
};

export const BATCH_API_ERRORS: readonly AnyOperationErrors[] = [SUBMIT_JOB, LIST_JOBS, DESCRIBE_JOBS, TERMINATE_JOB];
