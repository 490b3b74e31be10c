/**
 * Protocol row `claim` (shared/domain/protocol.ts): a reserved job (a slot handed to it) moves to starting, unless a
 * limit of it is over a lowered limit, or its pool's counter is adopting (then row `revoke`: the reservation is taken
 * back), then starts.
 */
import { demandOf } from '../../domain/job';
import { moved } from '../../ports/jobLedger';
import { ClaimOutcome } from '../../ports/leaseStore';
import { configuredDemand } from '../../domain/unlimited';
import { followConfiguration, overLimitGate } from '../gates';
import { revokeReservation } from '../revoke';
import { MOVED, type StepHandler, viaOf } from './context';
import { AcquireResult } from './result';
import { start } from './start';

export const claim: StepHandler = async (acq, delivery, record, move, now) => {
  const demand = configuredDemand(demandOf(record.spec), acq.deps.settings);
  const outcome = await acq.deps.leases.claim(demand, move, now);
  if (outcome === ClaimOutcome.Claimed)
    return start(acq, moved(record, move, now), record.startRequested === true, viaOf(delivery, 'claim'));
  // A pool limited again whose counter is still an unlimited pool's: switched to adopting first (then taken for over
  // its limit), as take does.
  if (outcome === ClaimOutcome.OverLimit && demand.limited) await followConfiguration(acq.deps, [demand.pool]);
  const overGate = outcome === ClaimOutcome.OverLimit ? await overLimitGate(acq.deps.leases, demand) : undefined;
  if (overGate !== undefined && (await revokeReservation(acq.deps, record, overGate))) {
    acq.deps.log.info('reservation taken back: the pool is over its lowered limit, or adopting', {
      jobId: record.jobId,
      pool: record.pool,
      kind: record.kind,
    });
    return AcquireResult.Waiting;
  }
  return MOVED;
};
