/**
 * Protocol row `rateWait` (shared/domain/protocol.ts): a start whose booked time passed (a late wake-up) and whose
 * start rate has none to give within the horizon keeps its slot; its message comes back when it has.
 */
import { delaySecondsUntil } from '../../domain/backoff';
import { encodeJobBody } from '../../domain/jobBody';
import { PROTOCOL } from '../../domain/protocol';
import type { JobRecord } from '../../ports/jobLedger';
import type { Acquiring } from './context';
import { duplicate } from './duplicate';
import { AcquireResult } from './result';

/**
 * A start whose booking went stale finds its rate with no start to give within the horizon: the job keeps its slot
 * and its message comes back when a start can be booked (protocol step rateWait); that delivery resumes the start.
 */
export async function waitForRate(acq: Acquiring, record: JobRecord, retryAt: number): Promise<AcquireResult> {
  const { spec } = record;
  const now = acq.deps.clock.now();
  const move = { jobId: spec.id, version: record.version, to: PROTOCOL.rateWait.to, patch: { claimableAt: retryAt } };
  if (!(await acq.deps.ledger.move(move, now))) return duplicate(acq, record, 'moved on while it waited for its start rate');
  await acq.deps.queue.send(encodeJobBody(spec), delaySecondsUntil(retryAt, now));
  acq.deps.log.info("start waits for its limit's start rate", { jobId: spec.id, pool: spec.pool, kind: spec.kind, retryAt });
  return AcquireResult.RetryScheduled;
}
