import { createHash } from 'node:crypto';
import type { EventContext } from '../../../local/simulators/events';
import type { SimOutcome, SimRun } from '../../../local/simulators/model';
import { ESSENTIAL_CONTAINER_EXITED, TASK_FAILED_TO_START } from './taskOutcome';

/**
 * An ECS task as the simulator describes it, from its run: one container, `main`. A run that ended reports STOPPED with
 * the stop code and exit code its outcome implies (succeeded: exit 0; failed: exit 1; timeout: killed for memory, 137;
 * stopped: UserInitiated, 143); a run whose status was set to STOPPED without ending (setStatus) reports a container
 * with no exit code yet. A task that never started (`failedToStart`: a capacity provider found no capacity) reports
 * STOPPED with stop code TaskFailedToStart, that reason, and a container that never ran (no exit code). Times are epoch
 * milliseconds here; the API sends seconds, the event ISO strings.
 */
export const SIM_CONTAINER = 'main';

export interface SimTask {
  taskArn: string;
  clusterArn: string;
  taskDefinitionArn: string;
  lastStatus: string;
  desiredStatus: string;
  startedBy?: string;
  group: string;
  launchType: string;
  createdAt: number;
  startedAt: number;
  stoppedAt?: number;
  stopCode?: string;
  stoppedReason?: string;
  containers: Array<{ containerArn: string; taskArn: string; name: string; lastStatus: string; exitCode?: number; reason?: string }>;
}

const EXIT: Record<SimOutcome, { exitCode: number; reason?: string }> = {
  succeeded: { exitCode: 0 },
  failed: { exitCode: 1 },
  timeout: { exitCode: 137, reason: 'OutOfMemoryError: Container killed due to memory usage' },
  stopped: { exitCode: 143 },
};

export const clusterArnOf = (ctx: EventContext, cluster: string) => `arn:aws:ecs:${ctx.region}:${ctx.account}:cluster/${cluster}`;

export function simTask(
  ctx: EventContext,
  run: Readonly<Pick<SimRun, 'executionId' | 'name' | 'args' | 'status' | 'startedAt' | 'endedAt' | 'outcome' | 'startCallAt'>>,
  stopReason: string | undefined,
  failedToStart?: string,
): SimTask {
  const { executionId: taskArn, args } = run;
  const ended = run.endedAt !== undefined ? (run.outcome ?? 'failed') : undefined;
  const exit = ended && failedToStart === undefined ? EXIT[ended] : undefined;
  const revision = /:(\d+)$/.exec(args.taskDefinition ?? '')?.[1] ?? '1';
  return {
    taskArn,
    clusterArn: clusterArnOf(ctx, args.cluster ?? 'default'),
    taskDefinitionArn: `arn:aws:ecs:${ctx.region}:${ctx.account}:task-definition/${run.name}:${revision}`,
    lastStatus: run.status,
    desiredStatus: ended || run.status === 'STOPPING' ? 'STOPPED' : 'RUNNING',
    ...(args.startedBy !== undefined ? { startedBy: args.startedBy } : {}),
    group: `family:${run.name}`,
    launchType: args.launchType ?? 'FARGATE',
    createdAt: run.startCallAt,
    startedAt: run.startedAt,
    ...(ended && failedToStart !== undefined
      ? { stoppedAt: run.endedAt!, stopCode: TASK_FAILED_TO_START, stoppedReason: failedToStart }
      : ended
        ? {
            stoppedAt: run.endedAt!,
            stopCode: ended === 'stopped' ? 'UserInitiated' : ESSENTIAL_CONTAINER_EXITED,
            stoppedReason: ended === 'stopped' ? (stopReason ?? 'Task stopped by user') : 'Essential container in task exited',
          }
        : {}),
    containers: [
      {
        containerArn: `arn:aws:ecs:${ctx.region}:${ctx.account}:container/${createHash('md5').update(taskArn).digest('hex')}`,
        taskArn,
        name: SIM_CONTAINER,
        lastStatus: ended ? 'STOPPED' : 'RUNNING',
        ...(exit ?? {}),
      },
    ],
  };
}

/** The task as DescribeTasks / RunTask / StopTask answer it (AWS JSON: epoch seconds). */
export function apiTask(task: SimTask) {
  const seconds = (ms: number | undefined) => (ms === undefined ? undefined : ms / 1000);
  return { ...task, createdAt: seconds(task.createdAt), startedAt: seconds(task.startedAt), stoppedAt: seconds(task.stoppedAt) };
}

/** The task as the Task State Change event carries it (ISO timestamps, a version that orders a task's events). */
export function eventTask(task: SimTask) {
  const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());
  return {
    ...task,
    createdAt: iso(task.createdAt),
    startedAt: iso(task.startedAt),
    stoppedAt: iso(task.stoppedAt),
    updatedAt: iso(task.stoppedAt ?? task.startedAt),
    version: task.stoppedAt === undefined ? 2 : 3,
    overrides: { containerOverrides: [{ name: SIM_CONTAINER }] },
    attachments: [],
  };
}
