import { RunOutcome } from '../../domain/job';

/**
 * How a STOPPED ECS task ended, from what DescribeTasks and the Task State Change event both report (the same Task
 * shape): its stop code and reason, and its containers' exit codes.
 *
 * ECS reports no `essential` flag on a task's containers (it lives in the task definition, which neither the event nor
 * DescribeTasks carries, and DescribeTaskDefinition cannot be scoped by IAM), so every container the task reports
 * counts as essential: the task succeeded when it stopped because an essential container exited
 * (`EssentialContainerExited`) and every container exited 0. Anything else failed, with what went wrong: another stop
 * code (UserInitiated, TaskFailedToStart, SpotInterruption, ...), a container with a non-zero exit code, or one with no
 * exit code at all (it never started, or was lost with its instance). A sidecar in a task Sluice gates must therefore
 * exit 0 when ECS stops it (SIGTERM), or the run is reported failed.
 *
 * One stopped task is no run at all: a task placed through a capacity provider waits in PROVISIONING for capacity and,
 * when none comes, stops with `TaskFailedToStart` and a placement reason (`RESOURCE:CPU`, `RESOURCE:MEMORY`, ...): its
 * containers never ran. That is a refused start, not a failed run (RunOutcome.NotStarted): the job is retried with
 * backoff like a RunTask answered with `failures`. Other TaskFailedToStart reasons (an image that cannot be pulled, a
 * secret that cannot be read) are the task's own failures.
 */
export const STOPPED = 'STOPPED';
export const ESSENTIAL_CONTAINER_EXITED = 'EssentialContainerExited';
export const TASK_FAILED_TO_START = 'TaskFailedToStart';
/** ECS's placement reasons (RESOURCE:CPU, RESOURCE:MEMORY, RESOURCE:PORTS, ...), or a capacity provider without capacity. */
const NO_CAPACITY = /\bRESOURCE:[A-Z]+|EMPTY CAPACITY PROVIDER/i;

export interface TaskView {
  readonly lastStatus?: string | null | undefined;
  readonly stopCode?: string | null | undefined;
  readonly stoppedReason?: string | null | undefined;
  readonly containers?: ReadonlyArray<{
    readonly name?: string | null | undefined;
    readonly exitCode?: number | null | undefined;
    readonly reason?: string | null | undefined;
  }> | null;
}

export interface TaskOutcome {
  readonly outcome: RunOutcome;
  readonly detail: string;
}

const MAX_DETAIL = 500;

/** The outcome of a stopped task; undefined while it has not stopped. */
export function taskOutcome(task: TaskView): TaskOutcome | undefined {
  if (task.lastStatus !== STOPPED) return undefined;
  const failed = (detail: string): TaskOutcome => ({ outcome: RunOutcome.Failed, detail: detail.slice(0, MAX_DETAIL) });
  const reason = task.stoppedReason ? `: ${task.stoppedReason}` : '';
  if (task.stopCode === TASK_FAILED_TO_START && NO_CAPACITY.test(task.stoppedReason ?? '')) {
    return { outcome: RunOutcome.NotStarted, detail: `not started for want of capacity (${task.stopCode})${reason}`.slice(0, MAX_DETAIL) };
  }
  if (task.stopCode && task.stopCode !== ESSENTIAL_CONTAINER_EXITED) return failed(`STOPPED (${task.stopCode})${reason}`);
  const containers = task.containers ?? [];
  if (containers.length === 0) return failed(`STOPPED with no container reported${reason}`);
  const problems = containers.flatMap((c) => {
    const name = c.name ?? '?';
    if (c.exitCode === undefined || c.exitCode === null) return [`${name} has no exit code${c.reason ? ` (${c.reason})` : ''}`];
    return c.exitCode === 0 ? [] : [`${name} exited ${c.exitCode}${c.reason ? ` (${c.reason})` : ''}`];
  });
  if (problems.length > 0) return failed(`STOPPED${reason}; ${problems.join('; ')}`);
  return { outcome: RunOutcome.Succeeded, detail: 'STOPPED: every container exited 0' };
}
