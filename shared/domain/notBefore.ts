import { fnv1a } from './fnv1a';

/**
 * Jobs that start at a time (`notBefore` on a spec). Pure rules: where a job waits until it is due, and how its due
 * time is indexed. No clock here: every function takes `now`.
 *
 * - Due now (or in the past): it starts like any other job.
 * - Due within the next second: the acquirer waits the rest (as for a booked `startAt`).
 * - Due within SQS's longest delay (15 minutes): the acquirer sends it again with DelaySeconds = the whole seconds left
 *   (it arrives up to a second early, and waits the rest), and registers it `scheduled` (so it can be cancelled, and a
 *   duplicate of it is known).
 * - Due later: registered `scheduled` on the sparse due index (hash key: a minute bucket and a shard, sort key: due time
 *   and job id); the loader sends each job due within the next 15 minutes with DelaySeconds, then moves it off the
 *   index (protocol step `load`).
 */

/** SQS DelaySeconds is 0..900 (15 minutes). */
export const MAX_DELAY_SECONDS = 900;
/** Jobs due within this are carried by an SQS delay; later ones wait on the due index. */
export const HORIZON_MS = MAX_DELAY_SECONDS * 1000;
/** A job due within this (ms) is waited for in the acquirer: a delay is whole seconds. */
export const SUB_SECOND_MS = 1000;
/** The due index's hash key is one bucket per minute ... */
export const BUCKET_MS = 60_000;
/** ... split in this many shards by job id, so 100,000 jobs due in one minute spread over 8 index partitions. */
export const DUE_SHARDS = 8;

/** `notBefore` as epoch ms, or undefined when the spec has none. The schema has checked it is ISO 8601 with an offset. */
export function dueAtOf(spec: { notBefore?: string }): number | undefined {
  if (spec.notBefore === undefined) return undefined;
  const at = Date.parse(spec.notBefore);
  if (Number.isNaN(at)) throw new Error(`notBefore '${spec.notBefore}' is not a time`);
  return at;
}

/**
 * The furthest ahead a `notBefore` may be: a year. A job due later is refused on arrival (dead-lettered with the reason),
 * never held: a year is already far longer than any record of a run is kept (30 days), and a time years ahead is mostly
 * a mistake (seconds read as milliseconds, a wrong year) that would otherwise hold a record, and a place on the due
 * index, for as long.
 */
export const MAX_NOT_BEFORE_AHEAD_MS = 365 * 24 * 3600_000;

/** Why a job due at `dueAt` is refused at `now` (more than MAX_NOT_BEFORE_AHEAD_MS ahead); undefined when it is not. */
export function notBeforeTooFar(dueAt: number | undefined, now: number): string | undefined {
  if (dueAt === undefined || dueAt - now <= MAX_NOT_BEFORE_AHEAD_MS) return undefined;
  const latest = new Date(now + MAX_NOT_BEFORE_AHEAD_MS).toISOString();
  return `notBefore ${new Date(dueAt).toISOString()} is more than a year ahead (at most 365 days: ${latest} now): send the job nearer its time`;
}

export const ArrivalKind = {
  /** due: start (take a slot) now */
  Now: 'now',
  /** due within a second: wait until `dueAt`, then start */
  Wait: 'wait',
  /** due within 15 minutes: send again with `delaySeconds`, register scheduled */
  Delay: 'delay',
  /** due later: register scheduled on the due index for the loader */
  Index: 'index',
} as const;
export type ArrivalKind = (typeof ArrivalKind)[keyof typeof ArrivalKind];

export type Arrival =
  | { kind: typeof ArrivalKind.Now }
  | { kind: typeof ArrivalKind.Wait; until: number }
  | { kind: typeof ArrivalKind.Delay; delaySeconds: number }
  | { kind: typeof ArrivalKind.Index; bucket: string; sortKey: string };

/** What a delivery of a job due at `dueAt` does at `now`. */
export function onArrival(dueAt: number | undefined, now: number, jobId: string): Arrival {
  if (dueAt === undefined || dueAt <= now) return { kind: ArrivalKind.Now };
  const left = dueAt - now;
  if (left < SUB_SECOND_MS) return { kind: ArrivalKind.Wait, until: dueAt };
  if (left <= HORIZON_MS) return { kind: ArrivalKind.Delay, delaySeconds: delaySecondsUntilDue(dueAt, now) };
  return { kind: ArrivalKind.Index, bucket: dueBucket(dueAt, jobId), sortKey: dueSortKey(dueAt, jobId) };
}

/**
 * The SQS delay that lands a job at most a second before it is due: the whole seconds left (rounded down), 0..900. The
 * acquirer waits the rest.
 */
export function delaySecondsUntilDue(dueAt: number, now: number): number {
  return Math.min(MAX_DELAY_SECONDS, Math.max(0, Math.floor((dueAt - now) / 1000)));
}

/** The minute (epoch ms / 60,000) a time falls in. */
export function minuteOf(at: number): number {
  return Math.floor(at / BUCKET_MS);
}

/** A stable shard of a job id (FNV-1a), 0..DUE_SHARDS-1. */
export function shardOf(jobId: string): number {
  const hash = fnv1a(jobId);
  return hash % DUE_SHARDS;
}

/** The due index's hash key of one minute's shard. */
export function bucketKey(minute: number, shard: number): string {
  return `${minute}#${shard}`;
}

/** The due index's hash key of a job due at `dueAt`. */
export function dueBucket(dueAt: number, jobId: string): string {
  return bucketKey(minuteOf(dueAt), shardOf(jobId));
}

/** The due index's sort key: due time (zero-padded: it sorts as a string) then job id. */
export function dueSortKey(dueAt: number, jobId: string): string {
  return `${dueSortPrefix(dueAt)}#${jobId}`;
}

/** The sort key bound of everything due at or before `at` (`dueSk <= bound`: '#' sorts after no digit, '$' after '#'). */
export function dueUpToBound(at: number): string {
  return `${dueSortPrefix(at)}$`;
}

function dueSortPrefix(at: number): string {
  return String(Math.max(0, Math.floor(at))).padStart(15, '0');
}

/** The due time a sort key was made with. */
export function dueAtOfSortKey(sortKey: string): number {
  return Number(sortKey.split('#')[0]);
}

/**
 * The minutes the loader reads at `now`, from its cursor (the first minute not loaded in full) to the minute the horizon
 * ends in; and whether each is loaded in full once read (its last ms is within the horizon: the cursor may pass it).
 */
export function minutesToLoad(cursor: number, now: number): Array<{ minute: number; whole: boolean }> {
  const end = now + HORIZON_MS;
  const minutes: Array<{ minute: number; whole: boolean }> = [];
  for (let minute = cursor; minute <= minuteOf(end); minute++) minutes.push({ minute, whole: (minute + 1) * BUCKET_MS - 1 <= end });
  return minutes;
}

/**
 * Where a job stands among waiting jobs by arrival: when it became eligible to start. A job with a notBefore counts
 * from then (not from when it was sent, which may be days before); one that arrives later than that, from its arrival.
 */
export function eligibleSince(firstSeenAt: number, dueAt: number | undefined): number {
  return dueAt === undefined ? firstSeenAt : Math.max(firstSeenAt, dueAt);
}
