/**
 * Protocol row `reject` (shared/domain/protocol.ts): a job that can never run (an unknown pool or limit, a weight no
 * limit can hold) is moved to dead, then dead-lettered (row `deadLettered`, ./deadLetter.ts). A first delivery is
 * registered first (row `register` on its own).
 */
import { JobState } from '../../domain/jobState';
import { PROTOCOL } from '../../domain/protocol';
import type { JobRecord } from '../../ports/jobLedger';
import { type Acquiring, MOVED } from './context';
import { sendToDlq } from './deadLetter';
import type { AcquireResult, Delivered } from './result';

/**
 * The job can never run (an unknown pool or limit, a weight no limit can hold): dead-lettered with the reason, its DLQ
 * copy the body that was delivered, byte for byte (the sender's own, on arrival).
 */
export async function reject(
  acq: Acquiring,
  record: JobRecord,
  reason: string,
  unsaved: boolean,
  delivered: Delivered,
): Promise<AcquireResult | typeof MOVED> {
  // A first delivery is registered first (rare: an unknown pool or key, a weight no limit holds); a job registered
  // meanwhile by another delivery is read again.
  if (unsaved && !(await acq.deps.ledger.register(record.spec, record.firstSeenAt)).created) return MOVED;
  const move = { jobId: record.jobId, version: record.version, to: PROTOCOL.reject.to, patch: { lastError: reason } };
  // Moved meanwhile: read it again. Not a duplicate to drop: the mover may be another copy of this message that
  // rejected it and died before its DLQ send, and then this delivery is the one that must send it (explorer, seed 32
  // with flow control: two copies, a lost answer).
  if (!(await acq.deps.ledger.move(move, acq.deps.clock.now()))) return MOVED;
  return sendToDlq(acq, { ...record, state: JobState.Dead, version: record.version + 1 }, reason, delivered);
}
