/**
 * Whether a pool is stuck: jobs wait in it and the one first in line has waited long. Waiting jobs live in the table,
 * not the job queue, so the queue's age alarm never sees them; the reconciler reads each limit's state every run and
 * publishes what these rules make of it (shared/adapters/powertools/poolGauges.ts), and the `pool-stuck` alarm compares
 * the oldest wait with the stage's `stuckPoolAlarmSeconds`. Pure: the pool's state and `now` in, no clock.
 *
 * The job first in line (the head of the wait-key order: priority, fair-share round, then arrival) is the next one a
 * freed slot goes to: if it waits long, nothing is let in, whatever arrives behind it.
 */

/** One limit (a pool or a keyed limit) as the reconciler reads it. */
export interface GateWaitState {
  gate: string;
  limit: number;
  inUse: number;
  /** jobs on its waiting list */
  waiting: number;
  /** when the job first in line could first run (epoch ms, from its wait key); undefined when none was read */
  firstInLineSince?: number;
}

/** Why jobs wait on a limit. */
export const WaitCause = {
  /** limit 0: nothing is let in until the limit is raised */
  Paused: 'paused',
  /** every slot held: the next run to end lets the first in line in */
  Full: 'full',
  /** slots free yet jobs wait: a lost hand-off the reconciler's fill lets in, or a start rate holding them */
  SlotsFree: 'slots-free',
} as const;
export type WaitCause = (typeof WaitCause)[keyof typeof WaitCause];

export interface GateWait {
  gate: string;
  cause: WaitCause;
  /** how long the job first in line has waited, whole seconds (0 when it is not known or not due yet) */
  waitSeconds: number;
}

/** Why and how long jobs wait on a limit; undefined when none waits. */
export function gateWait(state: GateWaitState, now: number): GateWait | undefined {
  if (state.waiting <= 0) return undefined;
  const cause = state.limit <= 0 ? WaitCause.Paused : state.inUse >= state.limit ? WaitCause.Full : WaitCause.SlotsFree;
  const since = state.firstInLineSince;
  const waitSeconds = since === undefined ? 0 : Math.max(0, Math.floor((now - since) / 1000));
  return { gate: state.gate, cause, waitSeconds };
}

export interface WaitSummary {
  /** the longest a job first in line on any limit has waited, seconds (0 when nothing waits): the alarm's metric */
  oldestWaitSeconds: number;
  /** limits paused (limit 0) with jobs waiting */
  pausedWithWaiting: number;
  /** the limit whose first in line waited longest */
  longest?: GateWait;
}

/** The stage's view over every limit's wait (gateWait's, undefined for a limit none waits on). */
export function summarizeWaits(waits: ReadonlyArray<GateWait | undefined>): WaitSummary {
  let longest: GateWait | undefined;
  let pausedWithWaiting = 0;
  for (const wait of waits) {
    if (!wait) continue;
    if (wait.cause === WaitCause.Paused) pausedWithWaiting += 1;
    if (!longest || wait.waitSeconds > longest.waitSeconds) longest = wait;
  }
  return { oldestWaitSeconds: longest?.waitSeconds ?? 0, pausedWithWaiting, ...(longest && { longest }) };
}
