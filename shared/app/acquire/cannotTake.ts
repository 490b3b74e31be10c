/**
 * After a take that failed (or was not tried: a pool seen full a moment ago): which of the protocol rows `park` and
 * `reject` (shared/domain/protocol.ts) follows, or a take again. A missing limit is created from configuration first.
 */
import { demandOf } from '../../domain/job';
import { isKeyGate, keyOf } from '../../domain/limits';
import { UnknownLimitError, UnknownPoolError, WeightTooLargeError } from '../../errors';
import type { JobRecord } from '../../ports/jobLedger';
import type { TakeResult } from '../../ports/leaseStore';
import { configuredDemand } from '../../domain/unlimited';
import { blockedBy, blockingGate, createConfiguredGate, followConfiguration } from '../gates';
import { type Acquiring, type MOVED, TAKE_AGAIN } from './context';
import { park } from './park';
import { reject } from './reject';
import type { AcquireResult, Delivered } from './result';

/**
 * A take found a limit of the job without room, or missing, or lost its race for a counter (`contended`). Reads
 * which: a missing one is created from configuration (then take again) or the job is rejected; a job heavier than a
 * limit can ever hold is rejected; otherwise the job parks on the list of the limit that holds it back (a pool limited
 * again whose counter is still an unlimited pool's: switched to adopting first, as the reconciler would). When every
 * limit has room by now: take again, or, after a lost race, park on the contended limit's list. MOVED when the
 * record moved while parking (read it again).
 */
export async function cannotTake(
  acq: Acquiring,
  record: JobRecord,
  unsaved: boolean,
  seen: TakeResult['seen'] | undefined,
  delivered: Delivered,
  /** the take was Contended on this gate (it exists, or the counters read now say it does not) */
  contended?: string,
): Promise<AcquireResult | typeof TAKE_AGAIN | typeof MOVED> {
  const demand = configuredDemand(demandOf(record.spec), acq.deps.settings);
  const now = acq.deps.clock.now();
  // The failed take's own view of a one-gate demand saves reading the counter again.
  const blocked = seen ? blockedBy([demand.pool], [seen.counter], demand, now) : await blockingGate(acq.deps.leases, demand, now);
  // Room everywhere: take again, unless the take lost its race (then wait on the contended limit's list, never on a
  // limit that does not exist: a missing one is created or refused first, below).
  if (!blocked) return contended === undefined ? TAKE_AGAIN : park(acq, record, contended, unsaved, true);
  if (blocked.missing) {
    if (await createConfiguredGate(acq.deps, blocked.gate)) return TAKE_AGAIN;
    return reject(acq, record, unknownGateReason(blocked.gate), unsaved, delivered);
  }
  const units = demandOf(record.spec).units;
  if (blocked.tooHeavy) {
    const where = isKeyGate(blocked.gate) ? `limit '${keyOf(blocked.gate)}'` : `pool '${blocked.gate}'`;
    const reason = new WeightTooLargeError(`weight ${units} is more than the ${blocked.limit} units of ${where}: it could never start`)
      .message;
    return reject(acq, record, reason, unsaved, delivered);
  }
  // The pool is limited again by a deploy no reconcile followed yet: its counter, still an unlimited pool's, takes the
  // configured limit and adopts the slots taken meanwhile before it admits again (a failure is logged; the reconciler
  // switches it then). The job waits on the pool's list until then.
  if (blocked.unsettled === 'unlimited') await followConfiguration(acq.deps, [blocked.gate]);
  // Waiting for a start rate: one tick per limit lets the waiting jobs in as starts can be booked.
  return park(acq, record, blocked.gate, unsaved, blocked.rate);
}

/** Why a job naming a gate that neither exists nor is configured can never run. */
function unknownGateReason(gate: string): string {
  if (!isKeyGate(gate))
    return new UnknownPoolError(
      `unknown pool '${gate}': create it with \`sluice pool set-limit ${gate} N --create\` (or configure it in the stage's pools), then redrive the job`,
    ).message;
  const key = keyOf(gate);
  return new UnknownLimitError(
    `unknown limit '${key}': set it with \`sluice limit set ${key} N\` or configure a default for the prefix '${key.split(':')[0]}' (KEY_LIMITS)`,
  ).message;
}
