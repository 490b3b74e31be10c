import type { StartErrorCodes } from '../kindDefinition';

/**
 * The documented errors of the three calls a callback start makes (the shared lists of shared/adapters/startErrors.ts
 * add the common ones: ThrottlingException, AccessDeniedException, ResourceNotFoundException, ...).
 * - SQS SendMessage (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessage.html):
 *   InvalidAddress, InvalidMessageContents, InvalidSecurity, KmsAccessDenied, KmsDisabled, KmsInvalidKeyUsage,
 *   KmsInvalidState, KmsNotFound, KmsOptInRequired, KmsThrottled, QueueDoesNotExist, RequestThrottled,
 *   UnsupportedOperation.
 * - EventBridge PutEvents (https://docs.aws.amazon.com/eventbridge/latest/APIReference/API_PutEvents.html):
 *   InternalException; each entry may fail on its own with an ErrorCode (ThrottlingException, InternalFailure,
 *   MalformedDetail, NotAuthorizedForSourceException, NotAuthorizedForDetailTypeException, ...).
 * - Lambda Invoke, asynchronous (https://docs.aws.amazon.com/lambda/latest/api/API_Invoke.html): the event is queued,
 *   so only the request's own errors apply: TooManyRequestsException, ResourceNotReadyException,
 *   ResourceConflictException, InvalidParameterValueException, InvalidRequestContentException,
 *   RequestTooLargeException, UnsupportedMediaTypeException, ResourceNotFoundException, KMS*Exception,
 *   RecursiveInvocationException, ServiceException.
 * A refusal proves nothing was sent; a server fault may come after the message was taken (the start is sent again,
 * with the same token: the user's system dedupes).
 */
export const CALLBACK_START_ERRORS: StartErrorCodes = {
  refused: [
    'RequestThrottled',
    'KmsThrottled',
    'TooManyRequestsException',
    'ResourceNotReadyException',
    'ResourceConflictException',
    'ThrottlingException',
  ],
  uncertain: ['InternalFailure', 'ServiceUnavailable', 'InternalException', 'ServiceException', 'InternalError'],
  permanent: [
    'QueueDoesNotExist',
    'InvalidAddress',
    'InvalidMessageContents',
    'InvalidSecurity',
    'UnsupportedOperation',
    'KmsAccessDenied',
    'KmsDisabled',
    'KmsInvalidKeyUsage',
    'KmsInvalidState',
    'KmsNotFound',
    'KmsOptInRequired',
    'MalformedDetail',
    'NotAuthorizedForSourceException',
    'NotAuthorizedForDetailTypeException',
    'InvalidParameterValueException',
    'InvalidRequestContentException',
    'RequestTooLargeException',
    'UnsupportedMediaTypeException',
    'KMSAccessDeniedException',
    'KMSDisabledException',
    'KMSInvalidStateException',
    'KMSNotFoundException',
    'RecursiveInvocationException',
    'ResourceNotFoundException',
    'AccessDeniedException',
  ],
};
