/**
 * Start rates on a limit (a pool or a keyed limit): at most one start per `intervalMs`, as a generic cell rate. The
 * limit's counter keeps `tat`, the earliest time the next start may be booked. An admission books its start time
 * `max(tat, now)` in the same transaction that takes its units, and moves `tat` one interval past it; it may book only
 * up to `RATE_HORIZON_MS` ahead (then it starts at its booked time, waiting at most that long), else it waits without
 * units until the limit's tick lets it in.
 */

/**
 * How far ahead a start may be booked: the longest an admitted job waits for its start time. More than the delay
 * granularity of a tick (SQS delays are whole seconds, rounded up so a tick never comes before its time) plus its
 * delivery: a tick meant for `tat - horizon` then arrives before `tat`, and bookings follow each other with no gap.
 */
export const RATE_HORIZON_MS = 2_000;

/** Fastest and slowest rates a limit may have (starts per second). */
export const MAX_STARTS_PER_SECOND = 1_000;
export const MIN_STARTS_PER_SECOND = 1 / 86_400;

/** A limit's rate as stored on its counter. */
export interface RateState {
  intervalMs: number;
  /** epoch ms: the earliest the next start may be booked for */
  tat: number;
}

/**
 * How late after its booked time a start may still happen on that booking. A job admitted early (a hand-off whose
 * wake-up came late) books again: starts happen within this much after booked times that are an interval apart.
 */
export const RATE_START_SLACK_MS = 100;

/** Whether a booked start time has passed by more than the slack (the start must be booked again). */
export function bookingIsStale(startAt: number, now: number): boolean {
  return now > startAt + RATE_START_SLACK_MS;
}

export type Booking = { startAt: number; nextTat: number } | { retryAt: number };

/**
 * The start time a job admitted now would get on a limit with this rate: `max(tat, now)`, if that is within the
 * horizon (`nextTat` is the limit's new `tat`); else when to try again (the booking comes within the horizon then).
 */
export function book(rate: RateState, now: number, horizonMs: number = RATE_HORIZON_MS): Booking {
  const startAt = Math.max(rate.tat, now);
  if (startAt > now + horizonMs) return { retryAt: startAt - horizonMs };
  return { startAt, nextTat: startAt + rate.intervalMs };
}

/**
 * Starts are booked this much further apart than the rate says: a start call reaches the job API a few tens of ms
 * earlier or later than its booked time (its own latency), and without the margin two such calls an interval apart
 * could put one start too many in a second as the API counts it (measured: up to 33 ms at 2/s on the local stack).
 */
export const RATE_MARGIN = 0.04;

/** Milliseconds between starts for a rate in starts per second (with RATE_MARGIN: 2/s books every 520 ms). */
export function intervalOf(startsPerSecond: number): number {
  return Math.ceil((1000 * (1 + RATE_MARGIN)) / startsPerSecond);
}

/**
 * Parses a rate as people write it: `2/s`, `30/m`, `100/h`, or a bare number of starts per second. Undefined if it is
 * not one, or outside MIN..MAX_STARTS_PER_SECOND.
 */
export function parseRate(text: string): number | undefined {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(?:\/\s*(s|m|h))?\s*$/.exec(text);
  if (!match) return undefined;
  const perUnit = Number(match[1]);
  const perSecond = perUnit / { s: 1, m: 60, h: 3600 }[(match[2] ?? 's') as 's' | 'm' | 'h'];
  return perSecond >= MIN_STARTS_PER_SECOND && perSecond <= MAX_STARTS_PER_SECOND ? perSecond : undefined;
}
