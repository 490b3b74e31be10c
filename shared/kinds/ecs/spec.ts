import * as z from 'zod';
import { base } from '../../domain/job';
import { nameOfJob } from '../runNames';

export const ECS_KIND = 'ecs';

/** A cluster: its name (1-255 letters, digits, `-`, `_`) or its ARN. */
const CLUSTER = /^([A-Za-z0-9_-]{1,255}|arn:aws[a-z-]*:ecs:[a-z0-9-]+:\d{12}:cluster\/[A-Za-z0-9_-]{1,255})$/;
/** A task definition: `family`, `family:revision` or its ARN (families are 1-255 letters, digits, `-`, `_`). */
const TASK_DEFINITION = /^(arn:aws[a-z-]*:ecs:[a-z0-9-]+:\d{12}:task-definition\/)?[A-Za-z0-9_-]{1,255}(:\d{1,10})?$/;
const ROLE_ARN = /^arn:aws[a-z-]*:iam::\d{12}:role\/[\w+=,.@/-]{1,512}$/;

const nonEmpty = z.string().min(1).max(1024);
const keyValue = z.object({ name: z.string().min(1).max(1024), value: z.string().max(32_768) }).strict();

const containerOverride = z
  .object({
    name: z.string().min(1).max(255),
    command: z.array(z.string().max(32_768)).max(256).optional(),
    environment: z.array(keyValue).max(256).optional(),
    cpu: z.number().int().min(0).optional(),
    memory: z.number().int().min(1).optional(),
    memoryReservation: z.number().int().min(1).optional(),
  })
  .strict();

const overrides = z
  .object({
    containerOverrides: z.array(containerOverride).max(32).optional(),
    cpu: nonEmpty.optional(),
    memory: nonEmpty.optional(),
    taskRoleArn: z.string().regex(ROLE_ARN, 'taskRoleArn must be an IAM role ARN').optional(),
    executionRoleArn: z.string().regex(ROLE_ARN, 'executionRoleArn must be an IAM role ARN').optional(),
  })
  .strict();

const networkConfiguration = z
  .object({
    awsvpcConfiguration: z
      .object({
        subnets: z.array(nonEmpty).min(1).max(16),
        securityGroups: z.array(nonEmpty).max(5).optional(),
        assignPublicIp: z.enum(['ENABLED', 'DISABLED']).optional(),
      })
      .strict(),
  })
  .strict();

const capacityProviderStrategy = z
  .array(
    z
      .object({
        capacityProvider: z.string().min(1).max(255),
        weight: z.number().int().min(0).max(1000).optional(),
        base: z.number().int().min(0).max(100_000).optional(),
      })
      .strict(),
  )
  .min(1)
  .max(20);

/**
 * One ECS task (RunTask, count 1) of a task definition on a cluster: a launch type or a capacity provider strategy
 * (not both; neither is the cluster's default strategy), the network configuration awsvpc tasks need, and overrides.
 * Sluice sets `clientToken` and `startedBy` itself.
 */
export const EcsJobSchema = z
  .object({
    ...base,
    kind: z.literal(ECS_KIND),
    cluster: z.string().regex(CLUSTER, 'cluster must be a cluster name or ARN'),
    taskDefinition: z.string().regex(TASK_DEFINITION, 'taskDefinition must be family, family:revision or a task definition ARN'),
    launchType: z.enum(['EC2', 'FARGATE', 'EXTERNAL', 'MANAGED_INSTANCES']).optional(),
    capacityProviderStrategy: capacityProviderStrategy.optional(),
    platformVersion: z.string().min(1).max(64).optional(),
    networkConfiguration: networkConfiguration.optional(),
    overrides: overrides.optional(),
  })
  .strict()
  .refine((spec) => spec.launchType === undefined || spec.capacityProviderStrategy === undefined, {
    message: 'give launchType or capacityProviderStrategy, not both',
    path: ['capacityProviderStrategy'],
  });

export type EcsJob = z.infer<typeof EcsJobSchema>;

/**
 * RunTask's client token for a job: up to 64 ASCII characters 33-126 (every character of a job id is one), so
 * `sluice-<id>` for ids up to 57 characters, the hashed form beyond (runNames.ts). ECS keeps a token for 24 hours, per
 * cluster: a RunTask with the same token and parameters in that time returns the first call's task, with other
 * parameters it is refused with ConflictException naming that task. A start that replaces a task that never started
 * (StartOptions.replacesRun) gets a token of its own, made from the job id and that task (always the hashed form: a
 * job id has no NUL), so it starts a new task, and finds that one again when repeated.
 */
export const clientTokenOf = (jobId: string, replacesRun?: string): string =>
  nameOfJob(replacesRun === undefined ? jobId : `${jobId}\0${replacesRun}`, { maxLength: 64, allowed: /[!-~]/ });

/**
 * The task's `startedBy`: up to 128 letters, digits, `-`, `/`, `_`. Every task Sluice starts carries one starting with
 * `sluice`: the releaser's rule matches only those, so the account's other tasks (services' among them, whose
 * startedBy is `ecs-svc/...`) never invoke it.
 */
export const startedByOf = (jobId: string): string => nameOfJob(jobId, { maxLength: 128, allowed: /[A-Za-z0-9_-]/ });

/** The family a task definition names (`family`, `family:3`, or an ARN): the name the simulator knows a run by. */
export function familyOf(taskDefinition: string): string {
  const tail = taskDefinition.includes('/') ? taskDefinition.slice(taskDefinition.lastIndexOf('/') + 1) : taskDefinition;
  return tail.split(':')[0]!;
}
