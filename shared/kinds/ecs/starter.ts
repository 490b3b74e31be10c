import { DescribeTasksCommand, ECSClient, RunTaskCommand, type RunTaskCommandOutput, StopTaskCommand } from '@aws-sdk/client-ecs';
import { jobApiClient } from '../../adapters/awsClients';
import { classifyStartError } from '../../adapters/startErrors';
import type { JobSpec } from '../../domain/job';
import { PermanentStartError, TransientStartError } from '../../errors';
import { type JobStarter, RunStatus } from '../../ports/jobStarter';
import { clientTokenOf, ECS_KIND, type EcsJob, startedByOf } from './spec';
import { ECS_START_ERRORS, TASK_NOT_PLACED } from './startErrors';
import { taskOutcome, type TaskView } from './taskOutcome';

/**
 * A task's lastStatus through its life cycle
 * (https://docs.aws.amazon.com/AmazonECS/latest/developerguide/task-lifecycle-explanation.html). Every status but
 * STOPPED is a task in progress (PENDING: waiting for placement or capacity); a STOPPED task is judged by taskOutcome.
 * The SDK has no enum of them (lastStatus is a string).
 */
export const EcsTaskStatus = {
  Provisioning: 'PROVISIONING',
  Pending: 'PENDING',
  Activating: 'ACTIVATING',
  Running: 'RUNNING',
  Deactivating: 'DEACTIVATING',
  Stopping: 'STOPPING',
  Deprovisioning: 'DEPROVISIONING',
  Stopped: 'STOPPED',
} as const;

const IN_PROGRESS = new Set<string>(Object.values(EcsTaskStatus).filter((s) => s !== EcsTaskStatus.Stopped));

function ecsJobOf(job: JobSpec): EcsJob {
  if (job.kind !== ECS_KIND) throw new PermanentStartError(`job ${job.id} is not an ECS job`, 'WrongKind');
  return job;
}

interface SdkError {
  name?: string;
  resourceIds?: string[];
}

/**
 * ECS tasks: RunTask (count 1) with a client token derived from the job id (clientTokenOf) and startedBy marking the
 * task as Sluice's (startedByOf). Within the token's 24 hours a repeated start returns the first call's task; one with
 * other parameters is refused with ConflictException naming it, and that task is the job's. A RunTask answered with
 * `failures` and no task placed nothing: a definite refusal (TaskNotPlaced), retried later like throttling.
 */
export class EcsStarter implements JobStarter {
  readonly kind = ECS_KIND;

  constructor(private readonly ecs: ECSClient) {}

  async start(job: JobSpec): Promise<{ executionId: string }> {
    const spec = ecsJobOf(job);
    const what = `RunTask ${spec.taskDefinition} on ${spec.cluster}`;
    let out: RunTaskCommandOutput;
    try {
      out = await this.ecs.send(
        new RunTaskCommand({
          cluster: spec.cluster,
          taskDefinition: spec.taskDefinition,
          count: 1,
          clientToken: clientTokenOf(spec.id),
          startedBy: startedByOf(spec.id),
          launchType: spec.launchType,
          capacityProviderStrategy: spec.capacityProviderStrategy,
          platformVersion: spec.platformVersion,
          networkConfiguration: spec.networkConfiguration,
          overrides: spec.overrides,
        }),
      );
    } catch (error) {
      const earlier = (error as SdkError | null)?.name === 'ConflictException' ? (error as SdkError).resourceIds?.[0] : undefined;
      if (earlier) return { executionId: earlier };
      throw classifyStartError(error, what, ECS_START_ERRORS);
    }
    const taskArn = out.tasks?.[0]?.taskArn;
    if (taskArn) return { executionId: taskArn };
    const failures = out.failures ?? [];
    if (failures.length > 0) {
      const reasons = failures.map((f) => [f.reason, f.detail].filter(Boolean).join(' ')).join('; ');
      throw new TransientStartError(`${what}: not placed: ${reasons}`, TASK_NOT_PLACED, { definite: true });
    }
    // An answer with neither a task nor a failure: a task may exist under the token, so the next try must ask for it.
    throw new TransientStartError(`${what} returned no task and no failure`, 'NoRunId', { definite: false });
  }

  async status(job: JobSpec, executionId: string): Promise<RunStatus> {
    const spec = ecsJobOf(job);
    const { tasks } = await this.ecs.send(new DescribeTasksCommand({ cluster: spec.cluster, tasks: [executionId] }));
    const task = tasks?.find((t) => t.taskArn === executionId);
    // Unknown: ECS answers `failures` (MISSING) for a task it does not know, or no longer (stopped tasks are kept an hour).
    return task ? mapTask(task) : RunStatus.Unknown;
  }

  async stop(job: JobSpec, executionId: string): Promise<void> {
    const spec = ecsJobOf(job);
    await this.ecs.send(
      new StopTaskCommand({ cluster: spec.cluster, task: executionId, reason: 'stopped by Sluice (past its maximum run time)' }),
    );
  }
}

/** The kind's starter on the process's ECS client (one attempt: a throttled start must reach Sluice at once). */
export function createStarter(): EcsStarter {
  return new EcsStarter(jobApiClient('ecs', () => new ECSClient({ maxAttempts: 1 })));
}

/** A described task -> RunStatus: in progress until STOPPED, then succeeded or failed by its containers (taskOutcome). */
export function mapTask(task: TaskView): RunStatus {
  const ended = taskOutcome(task);
  if (ended) return ended.outcome === 'succeeded' ? RunStatus.Succeeded : RunStatus.Failed;
  return task.lastStatus && IN_PROGRESS.has(task.lastStatus) ? RunStatus.InProgress : RunStatus.Unknown;
}
