import { type AnyOperationErrors, CallRole, type OperationErrors, ReadTake, StartTake, StopTake } from '../apiErrors';

/**
 * Every error of the ECS calls the starter makes (the SDK's `@throws` of each command, the API reference, and the
 * errors every AWS API shares: shared/kinds/apiErrors.ts COMMON_ERRORS), and how Sluice takes each.
 *
 * RunTask answers two of its capacity refusals with exceptions that otherwise mean a wrong request, so their message
 * decides (https://docs.aws.amazon.com/AmazonECS/latest/APIReference/API_RunTask.html):
 * - ClientException is also "the quota of tasks in the PROVISIONING per cluster has been reached" under managed
 *   scaling: a message naming PROVISIONING is a refusal to retry. Every other ClientException (a bad identifier, an
 *   inactive task definition, a missing permission) names none of it, and stays permanent. Fargate's "Capacity is
 *   unavailable at this time" is a refusal too (https://repost.aws/knowledge-center/ecs-fargate-runtask-capacity).
 * - InvalidParameterException carries EC2's throttling (`RequestLimitExceeded`, when ECS calls EC2 for the task's
 *   network interface): a message naming it is throttling, a refusal; any other is a bad parameter.
 * Wrongly taking a refusal as permanent dead-letters a job that would have run; wrongly taking a bad request as a
 * refusal only retries it until its retry budget ends. So the message cases match broadly.
 *
 * A task RunTask could not place (no CPU, memory, ports, ENIs: RESOURCE:*, AGENT, ATTRIBUTE) is no exception: RunTask
 * answers 200 with `failures` and no task, which the starter takes as a refusal (TASK_NOT_PLACED).
 */
const CLIENT = '@aws-sdk/client-ecs';
const API = 'https://docs.aws.amazon.com/AmazonECS/latest/APIReference';
const COMMON = `${API}/CommonErrors.html`;

/** The code of the refusal RunTask's `failures` answer becomes. */
export const TASK_NOT_PLACED = 'TaskNotPlaced';

const PROVISIONING_QUOTA = /PROVISIONING/i;
const NO_CAPACITY = /capacity is unavailable/i;
const EC2_THROTTLED = /RequestLimitExceeded/;
const DENIED = 'Sluice lacks a permission (ecs:RunTask, iam:PassRole): it stays wrong until IAM is fixed (never taken as gone)';

export const RUN_TASK: OperationErrors<typeof CallRole.Start> = {
  operation: 'RunTask',
  client: CLIENT,
  role: CallRole.Start,
  reference: `${API}/API_RunTask.html`,
  commonErrors: COMMON,
  errors: {
    AccessDeniedException: { take: StartTake.Permanent, why: DENIED },
    BlockedException: { take: StartTake.Permanent, why: 'the account is blocked' },
    ClientException: {
      take: StartTake.Permanent,
      why: 'a client error: a bad identifier, an inactive task definition, a missing permission',
      byMessage: [
        {
          match: PROVISIONING_QUOTA,
          example: 'Tasks provisioning capacity limit exceeded: the quota of tasks in the PROVISIONING state per cluster has been reached.',
          take: StartTake.Refused,
          why: "managed scaling's quota of PROVISIONING tasks per cluster is reached: refused, nothing started",
        },
        {
          match: NO_CAPACITY,
          example: 'Capacity is unavailable at this time. Please try again later or in a different availability zone',
          take: StartTake.Refused,
          why: 'Fargate has no capacity now: refused, nothing started',
        },
      ],
    },
    ClusterNotFoundException: { take: StartTake.Permanent, why: 'the cluster does not exist' },
    ConflictException: {
      take: StartTake.Uncertain,
      why: 'the client token is in use by another RunTask: a task of this job exists',
      handled: 'the starter answers with the task its resourceIds name (the job\'s own); without one it proves nothing',
    },
    InvalidParameterException: {
      take: StartTake.Permanent,
      why: 'a parameter is invalid: it fails the same way again',
      byMessage: [
        {
          match: EC2_THROTTLED,
          example: 'Request limit exceeded (Service: AmazonEC2; Status Code: 503; Error Code: RequestLimitExceeded)',
          take: StartTake.Refused,
          why: "EC2's throttling (RequestLimitExceeded): refused, nothing started",
        },
      ],
    },
    PlatformTaskDefinitionIncompatibilityException: {
      take: StartTake.Permanent,
      why: 'the platform version does not satisfy the task definition',
    },
    PlatformUnknownException: { take: StartTake.Permanent, why: 'the platform version does not exist' },
    ServerException: { take: StartTake.Uncertain, why: 'a server fault: the task may have started' },
    UnsupportedFeatureException: { take: StartTake.Permanent, why: 'the feature is not supported in this Region' },
  },
};

/** A task DescribeTasks does not know is no exception: it answers `failures` (MISSING), which the starter takes as gone. */
export const DESCRIBE_TASKS: OperationErrors<typeof CallRole.Status> = {
  operation: 'DescribeTasks',
  client: CLIENT,
  role: CallRole.Status,
  reference: `${API}/API_DescribeTasks.html`,
  commonErrors: COMMON,
  errors: {
    AccessDeniedException: { take: ReadTake.Permanent, why: DENIED },
    ClientException: { take: ReadTake.Permanent, why: "a client error (Sluice's request or permissions): asking again will not help" },
    ClusterNotFoundException: { take: ReadTake.Gone, why: "the task's cluster does not exist: neither does the task" },
    InvalidParameterException: { take: ReadTake.Permanent, why: "Sluice's request is invalid: asking again will not help" },
    ServerException: { take: ReadTake.Transient, why: 'a server fault: ask again later' },
  },
};

export const STOP_TASK: OperationErrors<typeof CallRole.Stop> = {
  operation: 'StopTask',
  client: CLIENT,
  role: CallRole.Stop,
  reference: `${API}/API_StopTask.html`,
  commonErrors: COMMON,
  errors: {
    AccessDeniedException: { take: StopTake.Permanent, why: DENIED },
    ClientException: { take: StopTake.Permanent, why: "a client error (Sluice's request or permissions): the task may still run" },
    ClusterNotFoundException: { take: StopTake.AlreadyEnded, why: "the task's cluster does not exist: nothing of it runs" },
    InvalidParameterException: {
      take: StopTake.Permanent,
      why: 'a parameter is invalid: it fails the same way again',
      // ECS answers StopTask of a task it no longer knows (stopped tasks are kept about an hour) this way.
      byMessage: [
        {
          match: /task was not found/i,
          example: 'The referenced task was not found.',
          take: StopTake.AlreadyEnded,
          why: 'ECS no longer knows the task: it stopped',
        },
      ],
    },
    ServerException: { take: StopTake.Transient, why: 'a server fault: the task may still run' },
  },
};

export const ECS_API_ERRORS: readonly AnyOperationErrors[] = [RUN_TASK, DESCRIBE_TASKS, STOP_TASK];
