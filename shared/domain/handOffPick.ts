import { turnOf } from './waiting';

/**
 * Which waiter a releaser hands its slot to first, when several releasers of one pool finish at once.
 *
 * Every releaser reads the head of the waiting list; those that read it at the same moment would all offer their slot
 * to the same first waiter, and all but one would lose the race (a cancelled transaction, then another try). A releaser
 * that has lost such a race on a limit lately (its releases of that limit overlap others') spreads instead: of the
 * first SPREAD_WIDTH waiters of the head's priority and fair round, it tries first the one its spread points at, then the ones after
 * it in the window, then the ones before, then the rest in wait order. Its spread is a hand-off ticket of the limit (a
 * counter: releases in flight together hold consecutive tickets, so those that read the list in the same state point
 * at different waiters; those that read it in turn too, unless one read later with an earlier ticket and exactly as
 * many waiters ahead gone meanwhile), or a hash of the releasing job's id when the store gave no ticket. A releaser
 * that has not lost a race lately tries the head first: strict wait order while no release of the limit has lost a race lately.
 * A lost race is told to the other releasers of the limit too (each runs in a container of its own): the loser marks the
 * limit's waiting list, and a releaser that finds a recent mark in its read spreads as if it had lost that race itself.
 * So the releasers of a busy pool do not each lose a first race of their own; once no race has been lost on the limit for
 * a minute, all of them go back to the head first (and the next race lost marks the list again).
 *
 * The bend, exactly: a waiter is let in only while fewer than SPREAD_WIDTH waiting jobs of its own priority and round
 * are ahead of it on the list (as its releaser read it); a job of a lower priority or a later round is never let in
 * while its releaser read one of a higher priority or an earlier round still waiting. Arrival order is kept only up to
 * that window. (The window stops at the round: were it to cross rounds, a small tenant's jobs, one per round, would
 * each wait out a window of other tenants' rounds.)
 */

/** Waiters of the head's priority and round a spreading releaser picks among (at most). */
export const SPREAD_WIDTH = 64;

/** How long a lost race on a limit keeps this releaser spreading on it (no race lost for that long: head first again). */
export const SPREAD_MEMORY_MS = 60_000;

/**
 * A releaser that lost a race marks the list only if the mark it knows is older than this (or absent): releasers that
 * keep losing races keep the mark fresh with a write every half memory at most, not one a race.
 */
export const RACE_MARK_REFRESH_MS = SPREAD_MEMORY_MS / 2;

/** Whether a releaser that just lost a race marks the list (`markedAt`: the newest mark it knows of, read or written). */
export function marksRace(markedAt: number | undefined, now: number): boolean {
  return markedAt === undefined || now - markedAt >= RACE_MARK_REFRESH_MS;
}

/** The last race lost on a limit as a releaser knows it: its own, or the list's mark if newer. */
export function lastRaceAt(ownLossAt: number | undefined, markedAt: number | undefined): number | undefined {
  if (ownLossAt === undefined) return markedAt;
  return markedAt === undefined ? ownLossAt : Math.max(ownLossAt, markedAt);
}

/** Waiters a releaser reads of a list: a spreading one its whole window, else the head and the next one. */
export function candidatesToRead(width: number): number {
  return Math.max(2, width);
}

/**
 * The window a releaser picks in now: SPREAD_WIDTH if it lost a hand-off race on the limit less than SPREAD_MEMORY_MS
 * ago, else 1 (the head). `maxWidth` is the widest allowed (1: never spread).
 */
export function spreadWidth(lastLostRaceAt: number | undefined, now: number, maxWidth = SPREAD_WIDTH): number {
  if (lastLostRaceAt === undefined || now - lastLostRaceAt >= SPREAD_MEMORY_MS) return 1;
  return Math.max(1, Math.floor(maxWidth));
}

/**
 * The order in which to try `waiters` (as read: in wait order, ascending wait key): the one `spread` points at among
 * the first `width` of the first one's priority, fair round and units (`unitsOf`, its weight), then the rest of that window after it, then the window before it, then
 * everything after the window in wait order. Width 1 (or a window of one) is wait order exactly.
 */
export function handOffOrder<W extends { waitKey: string }>(
  waiters: readonly W[],
  width: number,
  spread: number,
  unitsOf: (waiter: W) => number = () => 1,
): W[] {
  if (waiters.length === 0) return [];
  const order = turnOf(waiters[0]!.waitKey);
  const units = unitsOf(waiters[0]!);
  // The window holds the head's priority, round and weight only: a spread pick is never lighter than a heavy head waiting for
  // units (overtaking it), nor heavier (taking the units freed for it).
  let window = 1;
  while (
    window < Math.min(Math.floor(width), waiters.length) &&
    turnOf(waiters[window]!.waitKey) === order &&
    unitsOf(waiters[window]!) === units
  )
    window++;
  const pick = (spread >>> 0) % window;
  return [...waiters.slice(pick, window), ...waiters.slice(0, pick), ...waiters.slice(window)];
}

/**
 * A releaser's spread when it has no ticket: a 32-bit hash of the releasing job's id (FNV-1a, then murmur3's finaliser so that ids differing
 * in their last characters land far apart). Deterministic, so a retried release tries the same waiter first.
 */
export function spreadOf(jobId: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < jobId.length; i++) {
    h ^= jobId.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
