/** A job's life in the ledger. Terminal states never change again (but for a kept slot being given back). */
export const JobState = {
  /** known, holds no slot, not due yet (`notBefore`): its delayed message is on its way, or it waits on the due index */
  Scheduled: 'scheduled',
  /** known, holds no slot: its message is on its way to an acquirer (first delivery, or a retry after a refusal) */
  Queued: 'queued',
  /** parked in its pool's waiting list (a waiter item), holds no slot */
  Waiting: 'waiting',
  /** a slot was handed to it; its wake-up message is on its way */
  Reserved: 'reserved',
  /** holds a slot; one attempt (named by `attempt`) is calling the job API's start */
  Starting: 'starting',
  /** holds a slot; its run is recorded */
  Running: 'running',
  Succeeded: 'succeeded',
  Failed: 'failed',
  /** can never run (dead-lettered); holds a slot only while a run it may have started could still be going */
  Dead: 'dead',
  /** cancelled before it started (`sluice cancel`): it never starts */
  Cancelled: 'cancelled',
} as const;
export type JobState = (typeof JobState)[keyof typeof JobState];

export const TERMINAL_STATES: readonly JobState[] = [JobState.Succeeded, JobState.Failed, JobState.Dead, JobState.Cancelled];

/** States in which a job holds no slot and may be given one (taken by its acquirer, or handed to it). */
export const ADMITTABLE_STATES: readonly JobState[] = [JobState.Queued, JobState.Waiting];

/** States that always hold a slot. (A dead job may also hold one: see onKeptSlot in decisions.ts.) */
export const HOLDING_STATES: readonly JobState[] = [JobState.Reserved, JobState.Starting, JobState.Running];

export function isTerminal(state: JobState): boolean {
  return TERMINAL_STATES.includes(state);
}

/** Which moves the ledger allows (see docs/protocol.md); every write is also fenced by the record's version. */
export const TRANSITIONS: Readonly<Record<JobState, readonly JobState[]>> = {
  // Due: its delayed message takes a slot, parks or is rejected as a queued job's would; the loader sends it (queued).
  [JobState.Scheduled]: [JobState.Queued, JobState.Starting, JobState.Waiting, JobState.Dead, JobState.Cancelled],
  [JobState.Queued]: [JobState.Waiting, JobState.Starting, JobState.Reserved, JobState.Dead, JobState.Cancelled],
  // Straight to starting when the releaser that hands it a slot starts it itself (receiveStarting).
  [JobState.Waiting]: [JobState.Reserved, JobState.Starting, JobState.Cancelled],
  // Back to waiting when a lowered limit takes the reservation back.
  [JobState.Reserved]: [JobState.Starting, JobState.Waiting],
  // Starting -> starting: a new attempt takes over (the last one died, or its retry is due). Back to queued when a start
  // was refused (the slot is freed for the backoff). Straight to an end when the run's completion beats "running".
  [JobState.Starting]: [JobState.Starting, JobState.Running, JobState.Queued, JobState.Dead, JobState.Succeeded, JobState.Failed],
  // Running -> running: a heartbeat of a callback job's run. Back to queued when its run never started (no capacity).
  [JobState.Running]: [JobState.Running, JobState.Succeeded, JobState.Failed, JobState.Queued],
  [JobState.Succeeded]: [],
  [JobState.Failed]: [],
  // Dead -> dead: the slot kept for a run of unknown outcome is given back, or that run is found.
  [JobState.Dead]: [JobState.Dead],
  [JobState.Cancelled]: [],
};

export function canMove(from: JobState, to: JobState): boolean {
  return TRANSITIONS[from].includes(to);
}

/** The states a job may be in for a move to `to` to be allowed. */
export function sourcesOf(to: JobState): JobState[] {
  return (Object.keys(TRANSITIONS) as JobState[]).filter((from) => canMove(from, to));
}
