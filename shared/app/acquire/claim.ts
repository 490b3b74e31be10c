/**
 * Protocol row `claim` (shared/domain/protocol.ts): a reserved job (a slot handed to it) moves to starting, unless a
 * limit of it is over a lowered limit (then row `revoke`: the reservation is taken back), then starts.
 */
import { demandOf } from '../../domain/job';
import { moved } from '../../ports/jobLedger';
import { ClaimOutcome } from '../../ports/leaseStore';
import { overLimitGate } from '../gates';
import { revokeReservation } from '../revoke';
import { MOVED, type StepHandler, viaOf } from './context';
import { AcquireResult } from './result';
import { start } from './start';

export const claim: StepHandler = async (acq, delivery, record, move, now) => {
  const outcome = await acq.deps.leases.claim(demandOf(record.spec), move, now);
  if (outcome === ClaimOutcome.Claimed)
    return start(acq, moved(record, move, now), record.startRequested === true, viaOf(delivery, 'claim'));
  const overGate = outcome === ClaimOutcome.OverLimit ? await overLimitGate(acq.deps.leases, demandOf(record.spec)) : undefined;
  if (overGate !== undefined && (await revokeReservation(acq.deps, record, overGate))) {
    acq.deps.log.info('reservation taken back: the pool is over its lowered limit', {
      jobId: record.jobId,
      pool: record.pool,
      kind: record.kind,
    });
    return AcquireResult.Waiting;
  }
  return MOVED;
};
