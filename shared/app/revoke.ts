import { demandOf } from '../domain/job';
import { JobState } from '../domain/jobState';
import { PROTOCOL } from '../domain/protocol';
import type { JobRecord } from '../ports/jobLedger';
import type { SluiceDeps } from './deps';
import { waiterFor } from './waiters';

/**
 * Takes back a reservation while `overGate` (one of its limits) is over its lowered limit: the job waits again, in its
 * old place, on that limit's list (protocol step revoke). The waiter item is written first, so a job in `waiting`
 * always has one. False if the record moved on (claimed by its wake-up meanwhile) or the limit is no longer over.
 */
export async function revokeReservation(
  deps: Pick<SluiceDeps, 'leases' | 'clock'>,
  record: JobRecord,
  overGate: string = record.pool,
): Promise<boolean> {
  if (record.state !== JobState.Reserved || !record.lease) return false;
  await deps.leases.addWaiter(waiterFor(record, overGate));
  const move = { jobId: record.jobId, version: record.version, to: PROTOCOL.revoke.to };
  return deps.leases.freeOverLimit(demandOf(record.spec), overGate, move, deps.clock.now());
}
