import type { StartErrorCodes } from '../kindDefinition';

/**
 * StartFlow's documented errors (https://docs.aws.amazon.com/appflow/1.0/APIReference/API_StartFlow.html, "Errors"):
 * ConflictException (409), InternalServerException (500), ResourceNotFoundException (404),
 * ServiceQuotaExceededException (402); throttling comes as ThrottlingException (429). ConflictException is documented
 * only as "a conflict when processing the request", not as a refusal, so it proves nothing: uncertain.
 */
export const APPFLOW_START_ERRORS: StartErrorCodes = {
  refused: ['ThrottlingException', 'ServiceQuotaExceededException'],
  uncertain: ['InternalServerException', 'ConflictException'],
  permanent: ['ResourceNotFoundException', 'ValidationException', 'AccessDeniedException'],
};
