import type { StartErrorCodes } from '../kindDefinition';

/**
 * StartJobRun's documented errors
 * (https://docs.aws.amazon.com/glue/latest/dg/aws-glue-api-jobs-runs.html#aws-glue-api-jobs-runs-StartJobRun):
 * ConcurrentRunsExceededException (the job's own MaxConcurrentRuns), EntityNotFoundException,
 * InternalServiceException, InvalidInputException, OperationTimeoutException, ResourceNumberLimitExceededException;
 * throttling comes as ThrottlingException.
 */
export const GLUE_START_ERRORS: StartErrorCodes = {
  refused: ['ThrottlingException', 'ConcurrentRunsExceededException', 'ResourceNumberLimitExceededException'],
  uncertain: ['InternalServiceException', 'OperationTimeoutException'],
  permanent: ['EntityNotFoundException', 'InvalidInputException', 'AccessDeniedException'],
};
