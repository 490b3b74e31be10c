/**
 * Backfill: the units a heavy job at the head of a limit's waiting list cannot use yet go to lighter jobs behind it,
 * provided they cannot delay it. The rule (docs/protocol.md, "Backfill"), on one limit:
 *
 * - Every holder has an end-by: when its slot was taken plus its declared run limit (`runSeconds`). A holder without
 *   a declared limit, or past its end-by, has none: its units may come back at any moment.
 * - The head's shadow time is the earliest time from now at which the free units, those of the holders without an
 *   end-by and those of the holders whose end-by has come cover the head's units: the latest it has them under strict
 *   order if every job with a limit ends by it, however early the others end. It is now when the head fits already
 *   or might at any moment (nothing backfills then).
 * - A waiter behind the head starts now only if it declares a limit, its units fit in the units still free, and it
 *   ends by the shadow time (now + margin + its limit <= shadow time; the margin covers the moments between the
 *   decision and the write that lets it in). Waiters are taken in wait order, skipping those that do not fit.
 *
 * So every job let in ahead of the head has given its units back by the head's shadow time, which never moves later:
 * the head is never overtaken forever, and never starts later than under strict order. A job that declares no limit
 * never backfills. Holders are read from an index that may lag: one listed that has left counts its units twice
 * (available earlier: a stricter rule), and units the counter holds beyond those listed are taken as holders without
 * an end-by.
 *
 * Pure: time is passed in.
 */
import { type Demand, gatesOf } from './limits';

/** Units held on the limit, and when they come back at the latest (undefined: not known, maybe at any moment). */
export interface Holding {
  units: number;
  endBy?: number;
}

/** A waiting job as backfill sees it: its units, and its declared run limit (undefined: none). */
export interface BackfillCandidate {
  units: number;
  runMs?: number;
}

export interface BackfillInput {
  /** the limit's units free now (its maximum less the units in use: negative when lowered under its holders) */
  free: number;
  /** the limit's holders */
  holdings: readonly Holding[];
  /** the waiting jobs in wait order, the head first */
  waiting: readonly BackfillCandidate[];
  now: number;
  /** the time between the decision and the write that lets a job in, at most */
  marginMs: number;
}

export interface BackfillPlan {
  /** the head's shadow time (no head: undefined) */
  shadowAt?: number;
  /** indexes into `waiting` of the jobs to let in now, in wait order (never the head) */
  picks: number[];
}

/** A holder's end-by: when its slot was taken plus its declared run limit. */
export function endByOf(since: number, runMs: number | undefined): number | undefined {
  return runMs === undefined ? undefined : since + runMs;
}

/**
 * The earliest time from `now` at which the free units, those of holders without an end-by (or past it) and those of
 * holders whose end-by has come cover `units`; undefined if even every holder's units would not.
 */
export function shadowTime(free: number, holdings: readonly Holding[], units: number, now: number): number | undefined {
  const known = holdings.filter((holding): holding is Required<Holding> => holding.endBy !== undefined && holding.endBy > now);
  let available = free + holdings.reduce((sum, holding) => sum + holding.units, 0) - known.reduce((sum, holding) => sum + holding.units, 0);
  if (units <= available) return now;
  for (const holding of known.sort((a, b) => a.endBy - b.endBy)) {
    available += holding.units;
    if (units <= available) return holding.endBy;
  }
  return undefined;
}

/** The jobs behind the head that start now without delaying it (see the rule above). */
export function planBackfill({ free, holdings, waiting, now, marginMs }: BackfillInput): BackfillPlan {
  const head = waiting[0];
  if (!head) return { picks: [] };
  const shadowAt = shadowTime(free, holdings, head.units, now);
  const picks: number[] = [];
  // shadowAt === now: the head fits (a plain fill lets it in) or may at any moment. Undefined: the limit is lowered
  // under the head's units; strict order until it is raised.
  if (shadowAt === undefined || shadowAt === now) return { ...(shadowAt !== undefined && { shadowAt }), picks };
  let left = free;
  for (let i = 1; i < waiting.length && left > 0; i++) {
    const { units, runMs } = waiting[i]!;
    if (runMs !== undefined && units <= left && now + marginMs + runMs <= shadowAt) {
      picks.push(i);
      left -= units;
    }
  }
  return { shadowAt, picks };
}

/**
 * The limits to fill after `from` (a job giving up its slot) handed it over to `to`: a hand-over gives the released
 * units to one waiter, and what it does not use is for the waiters after it. Those of `from`'s limits `to` does not
 * name; and, when either job is weighted, all of them (`to` may take fewer units than were released, and units may
 * have idled before the hand-over, too few for the job it went to but enough for the next ones).
 */
export function gatesLeftOver(from: Demand, to: Demand): string[] {
  if (from.units > 1 || to.units > 1) return gatesOf(from);
  const taken = new Set(gatesOf(to));
  return gatesOf(from).filter((gate) => !taken.has(gate));
}

/** How many waiters, from the head on, fit in `free` units one after another (strict order: a plain fill's share). */
export function fittingPrefix(units: readonly number[], free: number): number {
  let left = free;
  let count = 0;
  for (const u of units) {
    if (u > left) break;
    left -= u;
    count++;
  }
  return count;
}
