/**
 * Protocol row `take` (shared/domain/protocol.ts): a queued (or due scheduled) job takes its units from every limit of
 * its demand and moves to starting (a first delivery: registered by the same write), then starts. A take that fails
 * for want of room leads to `park` or `reject` (./cannotTake.ts). A job of an unlimited pool with no start rate and no
 * keyed limit takes no counter (shared/domain/unlimited.ts): its take is a fenced write of its own record, which never
 * finds a limit full, so it never parks.
 */
import { demandOf } from '../../domain/job';
import { gatesOf } from '../../domain/limits';
import { takeDemand } from '../../domain/unlimited';
import { moved } from '../../ports/jobLedger';
import { TakeOutcome } from '../../ports/leaseStore';
import { cannotTake } from './cannotTake';
import { MOVED, type StepHandler, TAKE_AGAIN } from './context';
import { start } from './start';
import { followConfiguration } from '../gates';
import { CounterSwitchError } from '../../errors';

export const take: StepHandler = async (acq, delivery, record, move, now) => {
  const demand = takeDemand(demandOf(record.spec), acq.deps.settings);
  const { unsaved, message, via } = delivery;
  // A first delivery for a pool this environment just saw full parks at once (no take bound to fail); the look at
  // the counter after parking lets it in if a slot was free after all.
  const hinted = unsaved && gatesOf(demand).length === 1 ? acq.fullHints.fullCounter(demand.pool, demand.units, now) : undefined;
  if (hinted) {
    const next = await cannotTake(acq, record, unsaved, { counter: hinted }, message);
    if (next === TAKE_AGAIN) acq.fullHints.forget(demand.pool);
    return next;
  }
  // Before this instance's first uncounted slot of the pool: its counter (if any) becomes an unlimited pool's, so that a
  // switch back to a limit finds it so and adopts (a counter left limited would admit on top of the uncounted slots).
  if (demand.uncounted && !acq.followedUnlimited.has(demand.pool)) {
    if ((await followConfiguration(acq.deps, [demand.pool])).failed > 0)
      throw new CounterSwitchError(`the counter of pool ${demand.pool} could not be switched to an unlimited pool's`);
    acq.followedUnlimited.add(demand.pool);
  }
  const { outcome, startAt, seen, gate } = await acq.deps.leases.take(demand, move, now, unsaved ? record : undefined);
  if (outcome === TakeOutcome.Taken) {
    acq.fullHints.forget(demand.pool);
    // The slot as the store wrote it: a release in this invocation gives it back as it was taken (counted or not).
    const lease = { pool: demand.pool, since: now, ...(demand.uncounted && { uncounted: true }) };
    return start(
      acq,
      { ...moved(record, move, now), lease, ...(startAt !== undefined && { startAt }) },
      record.startRequested === true,
      via,
    );
  }
  if (outcome === TakeOutcome.Full && seen?.counter) acq.fullHints.noteFull(demand.pool, seen.counter, demand.units, now);
  if (outcome === TakeOutcome.Stale) return MOVED;
  // Contention, not fullness (other admissions kept winning the race for a limit's counter): unless a limit is
  // missing or full after all, the job waits on that limit's list, registered for good, and a release, the limit's
  // tick or the reconciler lets it in.
  const contended = outcome === TakeOutcome.Contended ? (gate ?? demand.pool) : undefined;
  // TAKE_AGAIN: room was made meanwhile, or the limit was created.
  return cannotTake(acq, record, unsaved, contended ? undefined : seen, message, contended);
};
