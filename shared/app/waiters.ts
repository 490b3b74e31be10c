import { encodeJobBody } from '../domain/jobBody';
import { type Waiter, waitKey } from '../domain/waiting';
import type { JobRecord } from '../ports/jobLedger';

/** The waiter item of a job: its place in its pool's waiting list (by first arrival) and the body sent when let in. */
export function waiterFor(record: JobRecord): Waiter {
  return {
    pool: record.pool,
    jobId: record.jobId,
    kind: record.kind,
    waitKey: waitKey(record.firstSeenAt, record.jobId),
    body: encodeJobBody(record.spec),
    since: record.firstSeenAt,
  };
}
