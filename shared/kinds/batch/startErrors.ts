import type { StartErrorCodes } from '../kindDefinition';

/**
 * SubmitJob's documented errors (https://docs.aws.amazon.com/batch/latest/APIReference/API_SubmitJob.html): ClientException
 * (HTTP 400: a bad or inactive job queue or definition, a bad parameter, a missing permission) and ServerException
 * (HTTP 500). Throttling comes as TooManyRequestsException (HTTP 429). Batch refuses nothing for capacity: a job
 * waits in its queue (RUNNABLE) until compute is there, and holds its Sluice slot meanwhile.
 */
export const BATCH_START_ERRORS: StartErrorCodes = {
  refused: ['TooManyRequestsException', 'ThrottlingException'],
  uncertain: ['ServerException'],
  permanent: ['ClientException', 'AccessDeniedException'],
};
