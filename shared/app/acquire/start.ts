/**
 * Protocol row `record` (shared/domain/protocol.ts): after a `take`, `claim` or `resume`, the start call, and the run
 * it answered with recorded on the job. Before it, a stale booking books again or waits (row `rateWait`,
 * ./rateWait.ts); after a failed call, ./startFailed.ts; a record moved meanwhile, ./foundRun.ts.
 */
import { demandOf } from '../../domain/job';
import { PROTOCOL } from '../../domain/protocol';
import { bookingIsStale } from '../../domain/rate';
import { ContentionError, PermanentStartError, TransientStartError } from '../../errors';
import type { JobRecord, Move } from '../../ports/jobLedger';
import { MetricName } from '../deps';
import type { Acquiring, StartVia } from './context';
import { recordLate } from './foundRun';
import { waitForRate } from './rateWait';
import { AcquireResult } from './result';
import { failed } from './startFailed';

/** A late start whose new booking lost every race books again this much later (its message comes back then). */
const CONTENDED_BOOKING_RETRY_MS = 1_000;

export async function start(acq: Acquiring, read: JobRecord, mayHaveStartedBefore: boolean, via: StartVia): Promise<AcquireResult> {
  let record = read;
  const { spec } = record;
  const { ledger, clock, log, metrics } = acq.deps;
  // A limit's start rate booked this start for a time at most the horizon ahead: not before it, and not on a booking
  // long past (a late wake-up): starts follow booked times within the slack, so a late one books again.
  if (record.startAt !== undefined && bookingIsStale(record.startAt, clock.now())) {
    const booking = await acq.deps.leases.book(demandOf(spec), clock.now()).catch((error: unknown) => {
      // Other bookings kept winning the race for the rate: keep the slot, and book again a moment later.
      if (error instanceof ContentionError) return { retryAt: clock.now() + CONTENDED_BOOKING_RETRY_MS };
      throw error;
    });
    if ('retryAt' in booking) return waitForRate(acq, record, booking.retryAt);
    record = { ...record, startAt: booking.startAt };
  }
  if (record.startAt !== undefined && record.startAt > clock.now()) await clock.sleepUntil(record.startAt);
  let executionId: string;
  try {
    ({ executionId } = await acq.deps.starters[spec.kind].start(spec, {
      mayHaveStarted: mayHaveStartedBefore,
      requestedSince: record.firstStartAt,
      ...(record.replacesRun !== undefined && { replacesRun: record.replacesRun }),
      ...(record.firstStartAt !== undefined && { runSince: record.firstStartAt }),
    }));
  } catch (error) {
    if (error instanceof TransientStartError || error instanceof PermanentStartError)
      return failed(acq, record, error, mayHaveStartedBefore, via.oneHop);
    throw error;
  }
  const now = clock.now();
  const keys = { jobId: spec.id, pool: spec.pool, kind: spec.kind, executionId };
  // Independent writes: the run's way back to the job, and the job's move to running (fenced: only this attempt's).
  const running: Move = {
    jobId: spec.id,
    version: record.version,
    to: PROTOCOL.record.to,
    patch: { executionId, startedAt: now, attempts: record.attempts + 1 },
  };
  const [early, moved] = await Promise.all([
    ledger.recordRun({ kind: spec.kind, executionId, jobId: spec.id, pool: spec.pool }, now),
    ledger.move(running, now),
  ]);
  if (!moved) await recordLate(acq, spec.id, executionId, now);
  log.info('job started', { ...keys, recorded: moved });
  metrics.count(MetricName.Starts, 1, spec.pool);
  if (via.handOffSentAt !== undefined) metrics.milliseconds(MetricName.HandOffLatency, Math.max(0, now - via.handOffSentAt), spec.pool);
  // The run's completion event came before the run was recorded: finish it now, as the event would have.
  if (early) await acq.completeRun.complete(early);
  return AcquireResult.Started;
}
