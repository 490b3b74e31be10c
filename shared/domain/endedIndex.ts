import { JobState } from './jobState';
import { fnv1a } from './fnv1a';

/**
 * The sparse `ended` index: a job record in a terminal state carries `endedBucket` and `endedSk`, so the views read the
 * jobs that ended lately with Queries instead of a Scan of the table. Pure: every function takes the time.
 *
 * - hash key `<UTC day>#<shard>` (a dead job's: `<UTC day>#dead#<shard>`, so the dead-lettered jobs of the DLQ's two
 *   weeks are read without the day's succeeded and failed ones);
 * - sort key `<time of the terminal write, zero-padded ms>#<jobId>`: newest first with ScanIndexForward false.
 *
 * The shard is a hash of the job id, 0..ENDED_SHARDS-1: a day's ends spread over 16 index partitions, so a burst of ends
 * stays well under a partition's 1,000 write units a second; a GSI short of write capacity throttles the table's own
 * writes (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html#GSI.ThroughputConsiderations,
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html).
 */
export const ENDED_SHARDS = 16;
export const DAY_MS = 86_400_000;
/** The dead-lettered jobs listed are those of this many days: an SQS queue keeps a message at most 14 days. */
export const DEAD_LETTER_DAYS = 14;

/** The UTC day a time falls in, as YYYY-MM-DD. */
export function dayOf(at: number): string {
  return new Date(Math.floor(at / DAY_MS) * DAY_MS).toISOString().slice(0, 10);
}

/** A stable shard of a job id (FNV-1a), 0..ENDED_SHARDS-1. */
export function endedShardOf(jobId: string): number {
  const hash = fnv1a(jobId);
  return hash % ENDED_SHARDS;
}

/** Which buckets a terminal state's records go to: the dead ones apart. */
export const EndedClass = { Ended: 'ended', Dead: 'dead' } as const;
export type EndedClass = (typeof EndedClass)[keyof typeof EndedClass];

export function endedClassOf(state: string): EndedClass {
  return state === JobState.Dead ? EndedClass.Dead : EndedClass.Ended;
}

/** The index's hash key of one day's shard of a class. */
export function endedBucketKey(day: string, shard: number, endedClass: EndedClass): string {
  return endedClass === EndedClass.Dead ? `${day}#dead#${shard}` : `${day}#${shard}`;
}

/** The keys a record written in terminal state `state` at `at` carries. */
export function endedKeys(state: string, at: number, jobId: string): { endedBucket: string; endedSk: string } {
  return { endedBucket: endedBucketKey(dayOf(at), endedShardOf(jobId), endedClassOf(state)), endedSk: `${timePrefix(at)}#${jobId}` };
}

/** The sort key bound of everything written at or after `at` (`endedSk >= bound`). */
export function endedFromBound(at: number): string {
  return timePrefix(at);
}

/** The UTC days from the one `from` falls in to the one `to` falls in, the latest first. */
export function daysCovering(from: number, to: number): string[] {
  const days: string[] = [];
  for (let day = Math.floor(to / DAY_MS); day >= Math.floor(from / DAY_MS); day--) days.push(dayOf(day * DAY_MS));
  return days;
}

/** Every bucket of these days and class: ENDED_SHARDS a day. */
export function endedBuckets(days: readonly string[], endedClass: EndedClass): string[] {
  return days.flatMap((day) => Array.from({ length: ENDED_SHARDS }, (_, shard) => endedBucketKey(day, shard, endedClass)));
}

function timePrefix(at: number): string {
  return String(Math.max(0, Math.floor(at))).padStart(15, '0');
}
