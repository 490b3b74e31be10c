import type { JobKind, JobSpec, RunOutcome } from '../domain/job';

export const RunStatus = { InProgress: 'in-progress', Succeeded: 'succeeded', Failed: 'failed', Unknown: 'unknown' } as const;
export type RunStatus = (typeof RunStatus)[keyof typeof RunStatus];

export function outcomeOf(status: RunStatus): RunOutcome | undefined {
  if (status === RunStatus.Succeeded) return 'succeeded';
  if (status === RunStatus.Failed) return 'failed';
  return undefined;
}

/**
 * Starts and inspects runs of one job kind. `start` throws TransientStartError or PermanentStartError (shared/errors.ts)
 * and must be safe to call again for the same job id: it returns the run a previous call started, if any.
 */
export interface JobStarter {
  readonly kind: JobKind;
  start(job: JobSpec, options?: { mayHaveStarted?: boolean }): Promise<{ executionId: string }>;
  status(job: JobSpec, executionId: string): Promise<RunStatus>;
  stop(job: JobSpec, executionId: string): Promise<void>;
}

export type JobStarters = Readonly<Record<JobKind, JobStarter>>;
