/**
 * Protocol row `resume` (shared/domain/protocol.ts): a starting job whose attempt is presumed dead, or whose retry is
 * due (claimableAt passed), is taken over by this delivery, keeping its slot, and started (looking for a run first).
 */
import { moved } from '../../ports/jobLedger';
import { MOVED, type StepHandler } from './context';
import { start } from './start';

export const resume: StepHandler = async (acq, delivery, record, move, now) => {
  acq.deps.log.warn('resuming a job whose start was interrupted', { jobId: record.jobId, pool: record.pool, kind: record.kind });
  if (await acq.deps.ledger.move(move, now)) return start(acq, moved(record, move, now), record.startRequested === true, delivery.via);
  return MOVED;
};
