import type { StartErrorCodes } from '../kindDefinition';

/**
 * StartExecution's documented errors (https://docs.aws.amazon.com/step-functions/latest/apireference/API_StartExecution.html):
 * ExecutionAlreadyExists (handled by the starter: the name is the job's, so it is the job's earlier execution),
 * ExecutionLimitExceeded (the account's open executions quota), InvalidArn, InvalidExecutionInput, InvalidName,
 * KmsAccessDeniedException, KmsInvalidStateException, KmsThrottlingException, StateMachineDeleting,
 * StateMachineDoesNotExist, ValidationException; throttling comes as ThrottlingException. Server faults carry no
 * documented name (InternalFailure, ServiceUnavailable): they prove nothing.
 */
export const SFN_START_ERRORS: StartErrorCodes = {
  refused: ['ThrottlingException', 'ExecutionLimitExceeded', 'KmsThrottlingException'],
  uncertain: ['InternalFailure', 'ServiceUnavailable'],
  permanent: [
    'InvalidArn',
    'InvalidExecutionInput',
    'InvalidName',
    'KmsAccessDeniedException',
    'KmsInvalidStateException',
    'StateMachineDeleting',
    'StateMachineDoesNotExist',
    'ValidationException',
    'AccessDeniedException',
  ],
};
