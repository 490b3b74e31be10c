import type { JobKind } from './job';

/**
 * Waiting jobs are ordered by the time they first arrived, then by id, so hand-off is first in, first out and a
 * retried job keeps its place. The key sorts as a string: the time is zero-padded.
 */
export function waitKey(firstSeenAt: number, jobId: string): string {
  return `${String(Math.max(0, Math.floor(firstSeenAt))).padStart(15, '0')}#${jobId}`;
}

export interface Waiter {
  pool: string;
  jobId: string;
  kind: JobKind;
  waitKey: string;
  /** the job spec as JSON, exactly what is sent again when the job is let in */
  body: string;
  since: number;
}

/** A reservation (a slot taken for a job not started yet) older than this is re-sent by the reconciler. */
export function reservationIsStale(reservedAt: number, now: number, graceMs: number): boolean {
  return now - reservedAt > graceMs;
}
