/**
 * Protocol row `park` (shared/domain/protocol.ts): a job whose limit has no room for it (or whose take lost every race
 * for a busy counter) waits on that limit's list, its waiter item written first (a first delivery: with its record, in
 * one transaction); then the limit is looked at once more, and a rated limit's tick made sure of.
 */
import { PROTOCOL } from '../../domain/protocol';
import { type JobRecord, moved } from '../../ports/jobLedger';
import { MetricName } from '../deps';
import { ensureTick } from '../ticks';
import { waiterFor } from '../waiters';
import { type Acquiring, MOVED } from './context';
import { AcquireResult } from './result';

/**
 * Parks the job on the waiting list of `gate` (the limit with no room for it); MOVED if its record moved meanwhile
 * (decide again). A job with a fairness key gets its round first, kept on its record for when it waits again.
 */
export async function park(
  acq: Acquiring,
  record: JobRecord,
  gate: string,
  unsaved: boolean,
  tick = false,
): Promise<AcquireResult | typeof MOVED> {
  const { leases, ledger, clock, metrics, log } = acq.deps;
  const { spec } = record;
  const waitRank = record.waitRank ?? (spec.fairnessKey === undefined ? undefined : await leases.fairRank(spec.pool, spec.fairnessKey));
  const parked = { ...record, waitRank };
  const move = { jobId: spec.id, version: record.version, to: PROTOCOL.park.to, patch: { waitRank } };
  if (unsaved) {
    // A first delivery: the record is created waiting, with its waiter item, in one transaction.
    if (!(await leases.addWaiter(waiterFor(parked, gate), moved(parked, move, clock.now())))) return MOVED;
  } else {
    // The waiter first: a job in `waiting` always has one, so a hand-off can find it.
    await leases.addWaiter(waiterFor(parked, gate));
    if (!(await ledger.move(move, clock.now()))) return MOVED;
  }
  await afterParking(acq, record, gate, tick);
  metrics.count(MetricName.Parked, 1, spec.pool);
  log.debug('limit full, job waits', { jobId: spec.id, pool: spec.pool, kind: spec.kind, waitsOn: gate });
  return AcquireResult.Waiting;
}

/**
 * After a job parked (registered for good: its message may be deleted whatever happens next): units freed between
 * the failed take and parking would have found no waiter, so the limit is looked at once more and filled; `tick`: a
 * rated limit's tick is made sure of. Neither is needed for the job to run eventually (a release, the reconciler's
 * fill and its tick do that), so a failure here (contention on a hot counter that outlasted its tries) is logged, not
 * thrown: the delivery is done.
 */
async function afterParking(acq: Acquiring, record: JobRecord, gate: string, tick: boolean): Promise<void> {
  try {
    const counter = await acq.deps.leases.getPool(gate);
    // (An adopting counter admits nothing: the reconciler fills it once its pool's earlier slots are counted.)
    if (counter && counter.inUse < counter.limit && !counter.adopting) {
      acq.fullHints.forget(gate);
      await acq.handOff.fill(gate);
    }
    if (tick) await ensureTick(acq.deps, gate);
  } catch (error) {
    acq.deps.log.warn('job parked; letting jobs in right after failed (a release or the reconciler will)', {
      jobId: record.jobId,
      pool: record.pool,
      kind: record.kind,
      waitsOn: gate,
      error: String(error),
    });
  }
}
