import { awsConsole, type KindDefinition, regionOfArn } from '../kindDefinition';
import { ecsEvents } from './events';
import { ECS_KIND, EcsJobSchema } from './spec';
import { withRevision } from '../revisions';
import { ECS_API_ERRORS } from './apiErrors';
import type { OverrideUse } from '../../domain/overridePolicy';
import { environmentUse } from '../reservedEnvironment';

/** Task definitions (every revision) Sluice may run. */
const TASK_DEFINITIONS =
  'arn:${AWS::Partition}:ecs:${AWS::Region}:${AWS::AccountId}:task-definition/${param:allowedEcsTaskDefinitionPattern}';
/** The clusters Sluice may run tasks on: RunTask's ecs:cluster condition key. */
const CLUSTERS = 'arn:${AWS::Partition}:ecs:${AWS::Region}:${AWS::AccountId}:cluster/${param:allowedEcsClusterPattern}';
/** Tasks on the clusters Sluice may run tasks on (task ARNs name their cluster: task/<cluster>/<id>). */
const TASKS = 'arn:${AWS::Partition}:ecs:${AWS::Region}:${AWS::AccountId}:task/${param:allowedEcsClusterPattern}/*';
/**
 * The task and execution roles those task definitions (or a job's overrides) name: RunTask passes them to ECS. The
 * default pattern is not sluice-*: every role named so is one of Sluice's own (the roles deny passing them).
 */
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
  // family:revision, or family (from an ARN or as given)
  targetName: (spec) => spec.taskDefinition.slice(spec.taskDefinition.lastIndexOf('/') + 1),
  overrideSettings: ['command', 'environment', 'resources', 'taskRole', 'executionRole', 'network'],
  overrides: (spec) => {
    const o = spec.overrides;
    const uses: OverrideUse[] = [];
    (o?.containerOverrides ?? []).forEach((c, i) => {
      const at = `overrides.containerOverrides[${i}]`;
      if (c.command) uses.push({ setting: 'command', field: `${at}.command` });
      if (c.environment) uses.push({ setting: 'environment', field: `${at}.environment`, ...environmentUse(c.environment) });
      if (c.cpu !== undefined || c.memory !== undefined || c.memoryReservation !== undefined)
        uses.push({ setting: 'resources', field: at });
    });
    if (o?.cpu !== undefined || o?.memory !== undefined) uses.push({ setting: 'resources', field: 'overrides' });
    if (o?.taskRoleArn) uses.push({ setting: 'taskRole', field: 'overrides.taskRoleArn' });
    if (o?.executionRoleArn) uses.push({ setting: 'executionRole', field: 'overrides.executionRoleArn' });
    if (spec.networkConfiguration) uses.push({ setting: 'network', field: 'networkConfiguration' });
    return uses;
  },
  names: (spec) => [
    // As IAM matches the task definition's ARN, `task-definition/<family>:<revision>` (the latest when none is given).
    { param: 'allowedEcsTaskDefinitionPattern', field: 'taskDefinition', name: withRevision(spec.taskDefinition) },
    { param: 'allowedEcsClusterPattern', field: 'cluster', name: spec.cluster.slice(spec.cluster.lastIndexOf('/') + 1) },
    // A role's name with its path: what the role ARN's resource `role/<pattern>` is matched against.
    ...(['taskRoleArn', 'executionRoleArn'] as const).flatMap((field) => {
      const arn = spec.overrides?.[field];
      return arn
        ? [{ param: 'allowedEcsTaskRolePattern', field: `overrides.${field}`, name: arn.slice(arn.indexOf(':role/') + ':role/'.length) }]
        : [];
    }),
  ],
  maxRunSeconds: 24 * 3600,
  events: ecsEvents,
  iam: {
    params: { allowedEcsTaskDefinitionPattern: 'sluice-*', allowedEcsClusterPattern: 'sluice-*', allowedEcsTaskRolePattern: 'sluicejob-*' },
    // A repeated RunTask answers with the task (or names it in ConflictException): starting needs no read. RunTask is
    // authorized on the task definition; the cluster is its ecs:cluster condition key, and the roles are passed to ECS
    // tasks only (iam:PassedToService). Service Authorization Reference:
    // https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazonelasticcontainerservice.html;
    // https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_iam-condition-keys.html#ck_PassedToService.
    acquirer: [
      { sid: 'RunEcsTasks', actions: ['ecs:RunTask'], resource: TASK_DEFINITIONS, condition: { ArnLike: { 'ecs:cluster': CLUSTERS } } },
      {
        sid: 'PassEcsTaskRoles',
        actions: ['iam:PassRole'],
        resource: TASK_ROLES,
        condition: { StringEquals: { 'iam:PassedToService': 'ecs-tasks.amazonaws.com' } },
      },
    ],
    reconciler: [{ sid: 'EcsTaskStatus', actions: ['ecs:DescribeTasks', 'ecs:StopTask'], resource: TASKS }],
  },
  sdkService: 'ecs',
  apiErrors: ECS_API_ERRORS,
  /** RunTask's client token is valid for 24 hours (API_RunTask.html, clientToken): a later resumed start would start a second task. */
  startRetryWindowSeconds: 24 * 3600,
  // The run id is the task's ARN: arn:aws:ecs:<region>:<account>:task/<cluster>/<task id>.
  consoleUrl: (_spec, runId, region) => {
    const [, cluster = '', task = ''] = runId.slice(runId.indexOf(':task/') + 1).split('/');
    return awsConsole(
      regionOfArn(runId) ?? region,
      `ecs/v2/clusters/${encodeURIComponent(cluster)}/tasks/${encodeURIComponent(task)}/configuration`,
    );
  },
};
