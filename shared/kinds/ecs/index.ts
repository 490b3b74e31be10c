import type { KindDefinition } from '../kindDefinition';
import { ecsEvents } from './events';
import { ECS_KIND, EcsJobSchema } from './spec';
import { ECS_API_ERRORS } from './apiErrors';

/** Task definitions (every revision) Sluice may run. */
const TASK_DEFINITIONS =
  'arn:${AWS::Partition}:ecs:${AWS::Region}:${AWS::AccountId}:task-definition/${param:allowedEcsTaskDefinitionPattern}';
/** Tasks on the clusters Sluice may run tasks on (task ARNs name their cluster: task/<cluster>/<id>). */
const TASKS = 'arn:${AWS::Partition}:ecs:${AWS::Region}:${AWS::AccountId}:task/${param:allowedEcsClusterPattern}/*';
/** The task and execution roles those task definitions (or a job's overrides) name: RunTask passes them to ECS. */
const TASK_ROLES = 'arn:${AWS::Partition}:iam::${AWS::AccountId}:role/${param:allowedEcsTaskRolePattern}';

/**
 * ECS tasks: RunTask with a client token from the job id (idempotent for 24 hours), DescribeTasks, StopTask, Task State
 * Change (STOPPED, judged by the containers' exit codes) for tasks started by Sluice.
 */
export const ecs: KindDefinition<typeof ECS_KIND, 'Ecs', typeof EcsJobSchema> = {
  kind: ECS_KIND,
  key: 'Ecs',
  title: 'ECS tasks',
  schema: EcsJobSchema,
  target: (spec) => spec.taskDefinition,
  maxRunSeconds: 24 * 3600,
  events: ecsEvents,
  iam: {
    params: { allowedEcsTaskDefinitionPattern: 'sluice-*', allowedEcsClusterPattern: 'sluice-*', allowedEcsTaskRolePattern: 'sluice-*' },
    // A repeated RunTask answers with the task (or names it in ConflictException): starting needs no read.
    acquirer: [
      { sid: 'RunEcsTasks', actions: ['ecs:RunTask'], resource: TASK_DEFINITIONS },
      { sid: 'PassEcsTaskRoles', actions: ['iam:PassRole'], resource: TASK_ROLES },
    ],
    reconciler: [{ sid: 'EcsTaskStatus', actions: ['ecs:DescribeTasks', 'ecs:StopTask'], resource: TASKS }],
  },
  sdkService: 'ecs',
  apiErrors: ECS_API_ERRORS,
  /** RunTask's client token is valid for 24 hours (API_RunTask.html, clientToken): a later resumed start would start a second task. */
  startRetryWindowSeconds: 24 * 3600,
  starter: async () => (await import('./starter')).createStarter(),
};
