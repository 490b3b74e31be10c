import type { Demand } from '../../shared/domain/limits';
import type { Receiver } from '../../shared/ports/leaseStore';

/** One unit of a pool and nothing else: what a job without keyed limits or weight takes. */
export function unit(pool: string): Demand {
  return { pool, keys: [], units: 1 };
}

/** A job receiving one unit of `pool`, its waiter item (if `waitKey`) on the pool's list. */
export function receiver(jobId: string, pool: string, waitKey?: string): Receiver {
  return { jobId, demand: unit(pool), gate: pool, ...(waitKey !== undefined && { waitKey }) };
}
