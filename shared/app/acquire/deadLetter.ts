/**
 * Protocol row `deadLettered` (shared/domain/protocol.ts): a dead job's DLQ copy is sent, then noted on its record.
 * Also the DLQ send of a message that never became a job (not a job, another job under a known id).
 */
import { encodeJobBody } from '../../domain/jobBody';
import { JobState } from '../../domain/jobState';
import { PROTOCOL } from '../../domain/protocol';
import { type JobRecord, type Move, wroteMoveAfterAll } from '../../ports/jobLedger';
import { endWriter } from '../../domain/startAttempt';
import { MetricName } from '../deps';
import { jobEnded } from '../jobSetEnds';
import type { Acquiring } from './context';
import { AcquireResult, type Delivered } from './result';

/**
 * Sends a dead job to the DLQ, then notes that it did (protocol step deadLettered). The job is dead first, so nothing
 * can start it any more; a crash before the note leaves a dead job whose message comes back, and its delivery sends
 * the copy again: a second copy at worst, never none, and never a job in the DLQ that runs after all.
 *
 * The copy is the body of the delivery that dead-letters it when there is one (byte for byte: the sender's own
 * message on arrival, so the user finds it as sent and SQS's redrive restores it exactly), with its message id as an
 * attribute; a job given up later, after its start failed, has no sender's body at hand: its copy is the job's body as
 * Sluice writes it (encodeJobBody: its spec with its defaults filled in), which parses back to the same job.
 */
export async function sendToDlq(acq: Acquiring, record: JobRecord, reason: string, delivered?: Delivered): Promise<AcquireResult> {
  const { spec } = record;
  const context = { jobId: spec.id, pool: spec.pool, ...(delivered && { messageId: delivered.messageId }) };
  const result = await deadLetter(acq, delivered?.body ?? encodeJobBody(spec), reason, context, spec.kind);
  const now = acq.deps.clock.now();
  const noted = {
    jobId: spec.id,
    version: record.version,
    to: PROTOCOL.deadLettered.to,
    patch: { deadLetteredAt: now, endedBy: endWriter(acq.deps.random) },
  };
  // Only the delivery whose note lands announces the end (and counts it on its set's run): two copies of a dead job
  // both send its DLQ copy, but the second's note fails its fence. A note whose answer was lost is found by its token.
  if (await notedDead(acq, noted, now))
    await jobEnded(acq.deps, { ...record, state: JobState.Dead, lastError: reason, endedAt: record.endedAt ?? now });
  return result;
}

/** The dead-letter note written, by this call: applied now, or before with its answer lost (wroteMove). */
async function notedDead(acq: Acquiring, noted: Move, now: number): Promise<boolean> {
  return (await acq.deps.ledger.move(noted, now)) || (await wroteMoveAfterAll(acq.deps.ledger, noted));
}

/** `context` goes with the DLQ copy as attributes; `kind`, when known, only to the log. */
export async function deadLetter(
  acq: Acquiring,
  body: string,
  reason: string,
  context: Record<string, string>,
  kind?: string,
): Promise<AcquireResult> {
  await acq.deps.queue.deadLetter(body, reason, context);
  acq.deps.metrics.count(MetricName.DeadLettered, 1, context.pool);
  acq.deps.log.error('job dead-lettered', { ...context, kind, reason });
  return AcquireResult.DeadLettered;
}
