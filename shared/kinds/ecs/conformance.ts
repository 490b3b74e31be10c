import { RunStatus } from '../../ports/jobStarter';
import { envelope, type KindConformance } from '../kindConformance';
import { ECS_TASK_STATE_CHANGE } from './events';
import { EcsTaskStatus } from './starter';

const TASK = 'arn:aws:ecs:us-east-1:111122223333:task/sluice-jobs/0f3e5b8c2a6d4e1f9b7a3c5d2e8f1a4b';

/** A Task State Change event as the ECS docs show it (trimmed), for a task Sluice started. */
const change = (lastStatus: string, extra: Record<string, unknown> = {}) =>
  envelope(ECS_TASK_STATE_CHANGE.source, ECS_TASK_STATE_CHANGE.detailType, {
    clusterArn: 'arn:aws:ecs:us-east-1:111122223333:cluster/sluice-jobs',
    taskArn: TASK,
    taskDefinitionArn: 'arn:aws:ecs:us-east-1:111122223333:task-definition/sluice-nightly:3',
    lastStatus,
    desiredStatus: lastStatus === 'STOPPED' ? 'STOPPED' : 'RUNNING',
    startedBy: 'sluice-job-1',
    group: 'family:sluice-nightly',
    launchType: 'FARGATE',
    version: 2,
    containers: [{ name: 'main', lastStatus: 'RUNNING', taskArn: TASK }],
    ...extra,
  });

const stoppedBy = (stopCode: string, exitCode: unknown, extra: Record<string, unknown> = {}) =>
  change('STOPPED', { stopCode, stoppedReason: 'Essential container in task exited', containers: [{ name: 'main', exitCode }], ...extra });

export const conformance: KindConformance = {
  spec: (id, name) => ({
    kind: 'ecs',
    id,
    cluster: 'sluice-jobs',
    taskDefinition: name,
    launchType: 'FARGATE',
    networkConfiguration: { awsvpcConfiguration: { subnets: ['subnet-0a1b2c3d'], assignPublicIp: 'DISABLED' } },
    overrides: { containerOverrides: [{ name: 'main', environment: [{ name: 'DAY', value: '2026-11-22' }] }] },
  }),
  statuses: {
    PROVISIONING: RunStatus.InProgress,
    // waiting to be placed, or for capacity (a capacity provider scaling out)
    PENDING: RunStatus.InProgress,
    ACTIVATING: RunStatus.InProgress,
    RUNNING: RunStatus.InProgress,
    DEACTIVATING: RunStatus.InProgress,
    STOPPING: RunStatus.InProgress,
    DEPROVISIONING: RunStatus.InProgress,
    // Judged by its containers: this one was set to STOPPED while its container runs, so it has no exit code.
    STOPPED: RunStatus.Failed,
  },
  documentedStatuses: Object.values(EcsTaskStatus),
  ignoredEvents: [
    ['RUNNING', change('RUNNING')],
    ['PENDING', change('PENDING')],
    ['DEPROVISIONING', change('DEPROVISIONING', { desiredStatus: 'STOPPED' })],
    ['a stopped task a service started', stoppedBy('EssentialContainerExited', 0, { startedBy: 'ecs-svc/9223370545345641169' })],
    ['a stopped task with no startedBy', stoppedBy('EssentialContainerExited', 0, { startedBy: undefined })],
  ],
  malformedEvents: [
    ['no taskArn', change('STOPPED', { taskArn: undefined })],
    ['an empty lastStatus', change('')],
    ['a task ARN over 256 characters', change('STOPPED', { taskArn: 't'.repeat(257) })],
    ['an exit code that is not a number', stoppedBy('EssentialContainerExited', 'zero')],
  ],
};
