import type { StartErrorCodes } from '../kindDefinition';

/**
 * RunTask's documented errors (https://docs.aws.amazon.com/AmazonECS/latest/APIReference/API_RunTask.html):
 * AccessDeniedException, BlockedException (the account is blocked), ClientException (a client action: a bad
 * identifier, an inactive task definition, a missing permission), ClusterNotFoundException, ConflictException (the
 * client token is in use by a RunTask with other parameters: the starter takes the task it names as the job's),
 * InvalidParameterException, PlatformTaskDefinitionIncompatibilityException, PlatformUnknownException,
 * ServerException, UnsupportedFeatureException; throttling comes as ThrottlingException.
 *
 * A task that cannot be placed (no CPU, memory, ports, ENIs; RESOURCE:*, AGENT, ATTRIBUTE...) is no error: RunTask
 * answers 200 with `failures` and no task. The starter takes that as a refusal (TaskNotPlaced, definite).
 */
export const ECS_START_ERRORS: StartErrorCodes = {
  refused: ['ThrottlingException'],
  // ConflictException without the task it names proves nothing: a task may exist under the token.
  uncertain: ['ServerException', 'ConflictException'],
  permanent: [
    'AccessDeniedException',
    'BlockedException',
    'ClientException',
    'ClusterNotFoundException',
    'InvalidParameterException',
    'PlatformTaskDefinitionIncompatibilityException',
    'PlatformUnknownException',
    'UnsupportedFeatureException',
  ],
};

/** The code of the refusal RunTask's `failures` answer becomes. */
export const TASK_NOT_PLACED = 'TaskNotPlaced';
