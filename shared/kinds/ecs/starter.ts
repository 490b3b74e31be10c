import { DescribeTasksCommand, ECSClient, RunTaskCommand, type RunTaskCommandOutput, StopTaskCommand } from '@aws-sdk/client-ecs';
import { jobApiClient } from '../../adapters/awsClients';
import { startFailure, statusFailure, stopFailure } from '../../adapters/apiErrors';
import { RunOutcome } from '../../domain/job';
import { PermanentStartError, TransientStartError } from '../../errors';
import { type JobStarter, RunStatus, type StartOptions } from '../../ports/jobStarter';
import { StopResult } from '../apiErrors';
import { DESCRIBE_TASKS, RUN_TASK, STOP_TASK, TASK_NOT_PLACED } from './apiErrors';
import { clientTokenOf, ECS_KIND, type EcsJob, startedByOf } from './spec';
import { taskOutcome, type TaskView } from './taskOutcome';
import type { JobSpec } from '../registry';

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
/** The stop code of a task stopped by StopTask. */
const USER_INITIATED = 'UserInitiated';

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
 * `failures` and no task placed nothing: a definite refusal (TaskNotPlaced), retried later like throttling. A task that
 * was created but never started (RunOutcome.NotStarted) is replaced by a start with its own token
 * (StartOptions.replacesRun), since the job's token would answer with that task for 24 hours.
 */
export class EcsStarter implements JobStarter {
  readonly kind = ECS_KIND;

  constructor(private readonly ecs: ECSClient) {}

  async start(job: JobSpec, options: StartOptions = {}): Promise<{ executionId: string }> {
    const spec = ecsJobOf(job);
    const what = `RunTask ${spec.taskDefinition} on ${spec.cluster}`;
    let out: RunTaskCommandOutput;
    try {
      out = await this.ecs.send(
        new RunTaskCommand({
          cluster: spec.cluster,
          taskDefinition: spec.taskDefinition,
          count: 1,
          clientToken: clientTokenOf(spec.id, options.replacesRun),
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
      throw startFailure(RUN_TASK, error, what);
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

  /**
   * Gone when ECS does not know the task: DescribeTasks answers `failures` (MISSING) for a task it never had or no
   * longer keeps (stopped tasks are kept about an hour), and ClusterNotFoundException when its cluster is gone. Another
   * failure throws JobApiError (DESCRIBE_TASKS).
   */
  async status(job: JobSpec, executionId: string): Promise<RunStatus> {
    const spec = ecsJobOf(job);
    let tasks;
    try {
      ({ tasks } = await this.ecs.send(new DescribeTasksCommand({ cluster: spec.cluster, tasks: [executionId] })));
    } catch (error) {
      return statusFailure(DESCRIBE_TASKS, error, `DescribeTasks ${executionId}`);
    }
    const task = tasks?.find((t) => t.taskArn === executionId);
    return task ? mapTask(task) : RunStatus.Gone;
  }

  /** StopTask of a task that stopped already answers it as it is: already ended. */
  async stop(job: JobSpec, executionId: string): Promise<StopResult> {
    const spec = ecsJobOf(job);
    try {
      const { task } = await this.ecs.send(
        new StopTaskCommand({ cluster: spec.cluster, task: executionId, reason: 'stopped by Sluice (past its maximum run time)' }),
      );
      return task?.stopCode && task.stopCode !== USER_INITIATED ? StopResult.AlreadyEnded : StopResult.Stopped;
    } catch (error) {
      return stopFailure(STOP_TASK, error, `StopTask ${executionId}`);
    }
  }
}

const STATUS_OF: Record<RunOutcome, RunStatus> = {
  [RunOutcome.Succeeded]: RunStatus.Succeeded,
  [RunOutcome.Failed]: RunStatus.Failed,
  [RunOutcome.NotStarted]: RunStatus.NotStarted,
};

/** The kind's starter on the process's ECS client (one attempt: a throttled start must reach Sluice at once). */
export function createStarter(): EcsStarter {
  return new EcsStarter(jobApiClient('ecs', () => new ECSClient({ maxAttempts: 1 })));
}

/**
 * A described task -> RunStatus: in progress until STOPPED, then succeeded or failed by its containers, or not started
 * for want of capacity (taskOutcome).
 */
export function mapTask(task: TaskView): RunStatus {
  const ended = taskOutcome(task);
  if (ended) return STATUS_OF[ended.outcome];
  return task.lastStatus && IN_PROGRESS.has(task.lastStatus) ? RunStatus.InProgress : RunStatus.Unknown;
}
