import { type AnyOperationErrors, CallRole, type ErrorTable, type OperationErrors, StartTake, StopTake } from '../apiErrors';
import type { TargetType } from './spec';

/**
 * Every error of the calls a callback job's start and stop make (the SDK's `@throws` of each command, the API
 * references, and the errors every AWS API shares: shared/kinds/apiErrors.ts COMMON_ERRORS), and how Sluice takes
 * each. A start reads the token secret (GetSecretValue), then sends the start message to the job's target: an SQS
 * queue (SendMessage), an EventBridge bus (PutEvents) or a Lambda function (Invoke, asynchronous). A stop sends a
 * cancel the same way. A refusal proves nothing was sent; a server fault may come after the message was taken (the
 * start is sent again for the same run, and the user's system dedupes).
 */
const { Refused, Uncertain, Permanent } = StartTake;

/** Read before anything is sent: a failed read is a refusal (retried with backoff) unless it will stay wrong. */
export const GET_SECRET_VALUE: OperationErrors<typeof CallRole.Start> = {
  operation: 'GetSecretValue',
  client: '@aws-sdk/client-secrets-manager',
  role: CallRole.Start,
  reference: 'https://docs.aws.amazon.com/secretsmanager/latest/apireference/API_GetSecretValue.html',
  commonErrors: 'https://docs.aws.amazon.com/secretsmanager/latest/apireference/CommonErrors.html',
  errors: {
    DecryptionFailure: {
      take: Permanent,
      why: "the token secret cannot be decrypted with its KMS key: it stays so until the key's policy is fixed",
    },
    InternalServiceError: { take: Refused, why: 'a server fault on the secret read: nothing was sent' },
    InvalidParameterException: { take: Permanent, why: 'the secret id is invalid (CALLBACK_TOKEN_SECRET_ARN)' },
    InvalidRequestException: { take: Permanent, why: 'the secret is marked for deletion or not usable' },
    ResourceNotFoundException: { take: Permanent, why: 'the token secret does not exist (CALLBACK_TOKEN_SECRET_ARN)' },
    // A read: its server faults and throttling prove nothing was sent.
    InternalFailure: { take: Refused, why: 'a server fault on the secret read: nothing was sent' },
    ServiceUnavailable: { take: Refused, why: 'the service is unavailable for the secret read: nothing was sent' },
    RequestAbortedException: { take: Refused, why: 'the secret read was aborted: nothing was sent' },
    RequestTimeoutException: { take: Refused, why: 'the secret read timed out: nothing was sent' },
  },
};

const SQS_API = 'https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference';
const KMS_KEY = "the queue's KMS key cannot be used";

export const SEND_MESSAGE: OperationErrors<typeof CallRole.Start> = {
  operation: 'SendMessage',
  client: '@aws-sdk/client-sqs',
  role: CallRole.Start,
  reference: `${SQS_API}/API_SendMessage.html`,
  commonErrors: `${SQS_API}/CommonErrors.html`,
  errors: {
    InvalidAddress: { take: Permanent, why: 'the queue URL is not valid' },
    InvalidMessageContents: { take: Permanent, why: 'the message has characters SQS does not take' },
    InvalidSecurity: { take: Permanent, why: 'the request is not over HTTPS or not signed with SigV4' },
    KmsAccessDenied: { take: Permanent, why: `${KMS_KEY}: access denied` },
    KmsDisabled: { take: Permanent, why: `${KMS_KEY}: it is disabled` },
    KmsInvalidKeyUsage: { take: Permanent, why: `${KMS_KEY}: it is not a symmetric encryption key` },
    KmsInvalidState: { take: Permanent, why: `${KMS_KEY}: its state does not allow it` },
    KmsNotFound: { take: Permanent, why: `${KMS_KEY}: it does not exist` },
    KmsOptInRequired: { take: Permanent, why: 'the account is not subscribed to KMS' },
    KmsThrottled: { take: Refused, why: 'KMS throttled the send: nothing was sent' },
    QueueDoesNotExist: { take: Permanent, why: 'the queue does not exist' },
    RequestThrottled: { take: Refused, why: 'SQS throttled the send: nothing was sent' },
    UnsupportedOperation: { take: Permanent, why: 'the operation is not supported for this queue' },
  },
};

const EVENTS_API = 'https://docs.aws.amazon.com/eventbridge/latest/APIReference';
/** A failed entry of a PutEvents answered 200 (its ErrorCode); the sender throws it as an error of that name. */
const ENTRY = { documentedAt: `${EVENTS_API}/API_PutEventsResultEntry.html`, http: 200 } as const;

export const PUT_EVENTS: OperationErrors<typeof CallRole.Start> = {
  operation: 'PutEvents',
  client: '@aws-sdk/client-eventbridge',
  role: CallRole.Start,
  reference: `${EVENTS_API}/API_PutEvents.html`,
  commonErrors: `${EVENTS_API}/CommonErrors.html`,
  errors: {
    InternalException: { take: Uncertain, why: 'a server fault: the event may have been put' },
    // A failed entry of an answer: its event was not put.
    InvalidAccountIdException: { take: Permanent, why: 'an entry failed: the account id is not valid', ...ENTRY },
    InvalidArgument: { take: Permanent, why: 'an entry failed: a parameter is not valid', ...ENTRY },
    MalformedDetail: { take: Permanent, why: 'an entry failed: its detail is not valid JSON', ...ENTRY },
    RedactionFailure: { take: Permanent, why: 'an entry failed: redacting the CloudTrail event failed (not retryable)', ...ENTRY },
    NotAuthorizedForSourceException: {
      take: Permanent,
      why: 'an entry failed: no permission to put events of source sluice on the bus',
      ...ENTRY,
    },
    NotAuthorizedForDetailTypeException: {
      take: Permanent,
      why: 'an entry failed: no permission to put events of this detail type on the bus',
      ...ENTRY,
    },
  },
};

const LAMBDA_API = 'https://docs.aws.amazon.com/lambda/latest/api';
/** Errors of a synchronous run of the function: an asynchronous invoke is queued before it runs, so none comes; if one did, the function may have run. */
const RAN = (what: string) => ({
  take: Uncertain,
  why: `${what}: an error of running the function, which an asynchronous invoke does not wait for; it may have run`,
});
const NOT_READY = (what: string) => ({ take: Refused, why: `${what}: the function cannot take the event yet, nothing was queued` });
const BROKEN = (what: string) => ({ take: Permanent, why: `${what}: the function's configuration is broken, it stays so until fixed` });

export const INVOKE: OperationErrors<typeof CallRole.Start> = {
  operation: 'Invoke',
  client: '@aws-sdk/client-lambda',
  role: CallRole.Start,
  reference: `${LAMBDA_API}/API_Invoke.html`,
  commonErrors: `${LAMBDA_API}/CommonErrors.html`,
  errors: {
    CodeArtifactUserDeletedException: NOT_READY('its code artifact user was deleted (Lambda provisions a new one)'),
    CodeArtifactUserFailedException: BROKEN('provisioning its code artifact user failed'),
    CodeArtifactUserPendingException: NOT_READY('its code artifact user is still being provisioned'),
    DurableExecutionAlreadyStartedException: {
      take: Uncertain,
      why: 'a durable execution of that name already started: the start may have been taken',
    },
    EC2AccessDeniedException: BROKEN('Lambda lacks the permissions to set up its VPC access'),
    EC2ThrottledException: NOT_READY('EC2 throttled Lambda setting up the function'),
    EC2UnexpectedException: { take: Uncertain, why: 'EC2 failed unexpectedly for Lambda: whether the event was queued is not known' },
    EFSIOException: RAN('reading or writing its file system failed'),
    EFSMountConnectivityException: RAN('its file system could not be reached'),
    EFSMountFailureException: BROKEN('its file system cannot be mounted (permissions or configuration)'),
    EFSMountTimeoutException: RAN('mounting its file system timed out'),
    ENILimitReachedException: NOT_READY('no network interface can be created in its VPC now'),
    ENINotReadyException: NOT_READY('its VPC network interface is not ready yet'),
    InvalidParameterValueException: { take: Permanent, why: 'a parameter of the invoke is not valid' },
    InvalidRequestContentException: { take: Permanent, why: 'the request body is not valid JSON' },
    InvalidRuntimeException: BROKEN('its runtime is not supported'),
    InvalidSecurityGroupIDException: BROKEN('a security group of its VPC configuration is not valid'),
    InvalidSubnetIDException: BROKEN('a subnet of its VPC configuration is not valid'),
    InvalidZipFileException: BROKEN('its deployment package cannot be unzipped'),
    KMSAccessDeniedException: BROKEN('its environment variables cannot be decrypted (KMS access denied)'),
    KMSDisabledException: BROKEN('its environment variables cannot be decrypted (the KMS key is disabled)'),
    KMSInvalidStateException: BROKEN('its environment variables cannot be decrypted (the KMS key state)'),
    KMSNotFoundException: BROKEN('its environment variables cannot be decrypted (the KMS key is gone)'),
    ModeNotSupportedException: { take: Permanent, why: 'the function does not take this invocation mode' },
    NoPublishedVersionException: { take: Permanent, why: 'the function has no published version' },
    RecursiveInvocationException: { take: Permanent, why: 'Lambda stopped the invoke as a recursive loop' },
    RequestTooLargeException: { take: Permanent, why: 'the start message is over the invoke payload quota' },
    ResourceConflictException: NOT_READY('another operation on the function is in progress'),
    ResourceNotFoundException: { take: Permanent, why: 'the function does not exist' },
    ResourceNotReadyException: NOT_READY('the function is inactive, its VPC connection not available'),
    S3FilesMountConnectivityException: RAN('its S3 Files access point could not be reached'),
    S3FilesMountFailureException: BROKEN('its S3 Files access point cannot be mounted'),
    S3FilesMountTimeoutException: RAN('mounting its S3 Files access point timed out'),
    SerializedRequestEntityTooLargeException: { take: Permanent, why: 'the serialized request is over the size limit' },
    ServiceException: { take: Uncertain, why: 'a Lambda server fault: the event may have been queued' },
    ServiceQuotaExceededException: { take: Refused, why: 'a Lambda quota is reached: nothing was queued' },
    SnapStartException: RAN('its SnapStart restore hook failed'),
    SnapStartNotReadyException: NOT_READY('Lambda is still initializing its SnapStart snapshot'),
    SnapStartRegenerationFailureException: BROKEN('its SnapStart snapshot cannot be regenerated'),
    SnapStartTimeoutException: RAN('restoring its SnapStart snapshot timed out'),
    SubnetIPAddressLimitReachedException: NOT_READY('its subnets have no free IP address now'),
    TooManyRequestsException: { take: Refused, why: 'throttled (HTTP 429): nothing was queued' },
    UnsupportedMediaTypeException: { take: Permanent, why: 'the request body is not JSON' },
  },
};

/** Each target type's start call. */
export const SEND_OPERATION: Readonly<Record<TargetType, OperationErrors<typeof CallRole.Start>>> = {
  sqs: SEND_MESSAGE,
  eventBus: PUT_EVENTS,
  lambda: INVOKE,
};

/**
 * A stop is a cancel message sent the same way as the start: its errors are the start's, taken for a stop. A refusal
 * or a fault may pass (try again; the run's deadline ends it anyway); what stays wrong for the start stays wrong for
 * the cancel.
 */
function asStop(start: OperationErrors<typeof CallRole.Start>): OperationErrors<typeof CallRole.Stop> {
  const errors: ErrorTable<StopTake> = Object.fromEntries(
    Object.entries(start.errors).map(([name, e]) => [
      name,
      {
        ...e,
        take: e.take === Permanent ? StopTake.Permanent : StopTake.Transient,
        why: `as for the start: ${e.why}`,
        byMessage: undefined,
      },
    ]),
  );
  return { ...start, role: CallRole.Stop, errors };
}

export const CANCEL_OPERATION: Readonly<Record<TargetType, OperationErrors<typeof CallRole.Stop>>> = {
  sqs: asStop(SEND_MESSAGE),
  eventBus: asStop(PUT_EVENTS),
  lambda: asStop(INVOKE),
};

export const CALLBACK_API_ERRORS: readonly AnyOperationErrors[] = [
  GET_SECRET_VALUE,
  SEND_MESSAGE,
  PUT_EVENTS,
  INVOKE,
  ...Object.values(CANCEL_OPERATION),
];
