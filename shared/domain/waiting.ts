import type { Demand } from './limits';

/** Priorities a job may have: higher starts first. */
export const MAX_PRIORITY = 1_000_000;

/** Where a job stands among the waiting jobs besides its arrival: its priority and its fair-share round. */
export interface WaitOrder {
  /** higher first; default 0 */
  priority?: number;
  /** the job's round among its tenant's jobs (fairness); 0 for jobs without a fairness key */
  rank?: number;
}

/**
 * Waiting jobs are ordered by priority (higher first), then by fair-share round (lower first: round robin across
 * tenants, first in first out within one), then by the time they first arrived, then by id: a retried job keeps its
 * place. The key sorts as a string: every number is zero-padded to a fixed width.
 */
export function waitKey(firstSeenAt: number, jobId: string, order: WaitOrder = {}): string {
  const priority = String(MAX_PRIORITY - Math.trunc(order.priority ?? 0)).padStart(7, '0');
  const rank = String(Math.max(0, Math.floor(order.rank ?? 0))).padStart(12, '0');
  return `${priority}#${rank}#${String(Math.max(0, Math.floor(firstSeenAt))).padStart(15, '0')}#${jobId}`;
}

/** The fair-share round a wait key was made with (0 for a job without a fairness key). */
export function rankOf(key: string): number {
  return Number(key.split('#')[1] ?? 0);
}

/** The priority and fair round of a wait key (its first two fields), as one string: equal for keys of one turn. */
export function turnOf(key: string): string {
  const end = key.indexOf('#', key.indexOf('#') + 1);
  return end < 0 ? key : key.slice(0, end);
}

/** The time a wait key was made with: when the job could first run (its arrival, or its notBefore if later); undefined for a key of another shape. */
export function eligibleSinceOf(key: string): number | undefined {
  const part = key.split('#')[2];
  return part !== undefined && /^\d{15}$/.test(part) ? Number(part) : undefined;
}

export interface Waiter {
  /** the job's pool */
  pool: string;
  /**
   * The limit whose waiting list the job is on: the one that had no room for it when it last tried (its pool, or a
   * keyed limit's gate). Absent means its pool.
   */
  gate?: string;
  /** what the job takes when let in (absent: one unit of its pool) */
  demand?: Demand;
  jobId: string;
  kind: string;
  waitKey: string;
  /** the job spec as JSON, exactly what is sent again when the job is let in */
  body: string;
  since: number;
}

/** The gate whose waiting list the waiter is on. */
export function waiterGate(waiter: Pick<Waiter, 'pool' | 'gate'>): string {
  return waiter.gate ?? waiter.pool;
}

/** What the waiter takes when let in. */
export function waiterDemand(waiter: Pick<Waiter, 'pool' | 'demand'>): Demand {
  return waiter.demand ?? { pool: waiter.pool, keys: [], units: 1 };
}

/** A reservation (a slot taken for a job not started yet) older than this is re-sent by the reconciler. */
export function reservationIsStale(reservedAt: number, now: number, graceMs: number): boolean {
  return now - reservedAt > graceMs;
}
