import { demandOf } from '../domain/job';
import { encodeJobBody } from '../domain/jobBody';
import { dueAtOf, eligibleSince } from '../domain/notBefore';
import { type Waiter, waitKey } from '../domain/waiting';
import type { JobRecord } from '../ports/jobLedger';

/**
 * The waiter item of a job: its place in the waiting list of `gate` (its pool unless a keyed limit holds it back), by
 * priority, fair-share round and first arrival (a job with notBefore: from then, if it came earlier), and the body sent
 * when it is let in.
 */
export function waiterFor(record: JobRecord, gate: string = record.pool): Waiter {
  return {
    pool: record.pool,
    gate,
    demand: demandOf(record.spec),
    jobId: record.jobId,
    kind: record.kind,
    waitKey: waitKey(eligibleSince(record.firstSeenAt, dueAtOf(record.spec)), record.jobId, {
      priority: record.spec.priority,
      rank: record.waitRank,
    }),
    body: encodeJobBody(record.spec),
    since: record.firstSeenAt,
  };
}
