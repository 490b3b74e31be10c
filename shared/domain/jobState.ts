/** A job's life in the ledger. Terminal states never change again. */
export const JobState = {
  Queued: 'queued',
  Waiting: 'waiting',
  Starting: 'starting',
  Running: 'running',
  Succeeded: 'succeeded',
  Failed: 'failed',
  Dead: 'dead',
} as const;
export type JobState = (typeof JobState)[keyof typeof JobState];

export const TERMINAL_STATES: readonly JobState[] = [JobState.Succeeded, JobState.Failed, JobState.Dead];

/** States from which a job may be started: it holds no run yet. */
export const STARTABLE_STATES: readonly JobState[] = [JobState.Queued, JobState.Waiting];

export function isTerminal(state: JobState): boolean {
  return TERMINAL_STATES.includes(state);
}

/** Which moves the ledger allows; every write checks the `from` side, so a replay cannot move a job backwards. */
export const TRANSITIONS: Readonly<Record<JobState, readonly JobState[]>> = {
  [JobState.Queued]: [JobState.Waiting, JobState.Starting, JobState.Dead],
  [JobState.Waiting]: [JobState.Starting, JobState.Dead],
  // Back to queued only when a start failed transiently and the job is retried later. Straight to an end when the
  // run's completion arrives before the acquirer recorded it as running.
  [JobState.Starting]: [JobState.Running, JobState.Queued, JobState.Dead, JobState.Succeeded, JobState.Failed],
  [JobState.Running]: [JobState.Succeeded, JobState.Failed],
  [JobState.Succeeded]: [],
  [JobState.Failed]: [],
  [JobState.Dead]: [],
};

export function canMove(from: JobState, to: JobState): boolean {
  return TRANSITIONS[from].includes(to);
}

/** The states a job may be in for a move to `to` to be allowed. */
export function sourcesOf(to: JobState): JobState[] {
  return (Object.keys(TRANSITIONS) as JobState[]).filter((from) => canMove(from, to));
}

/**
 * A job given up after a start call whose outcome is unknown (no run recorded) may have a run going. Its slot is kept
 * until that run must have ended, counted from when the job was given up: freeing it sooner could exceed the limit.
 */
export function keepsSlotForUnknownRun(
  job: { state: JobState; startRequested?: boolean; executionId?: string; updatedAt: number },
  now: number,
  maxRunMs: number,
): boolean {
  return job.state === JobState.Dead && job.startRequested === true && !job.executionId && now - job.updatedAt < maxRunMs;
}
