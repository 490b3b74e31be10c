/**
 * Protocol row `schedule` (shared/domain/protocol.ts): a first delivery of a job whose notBefore is a second or more
 * ahead registers it scheduled; within 15 minutes its delayed copy is sent first, later it goes on the due index.
 */
import { canonicalJson, encodeJobBody } from '../../domain/jobBody';
import { JobState } from '../../domain/jobState';
import { type Arrival, ArrivalKind } from '../../domain/notBefore';
import type { JobSpec } from '../../kinds/registry';
import { type JobRecord, registeredRecord } from '../../ports/jobLedger';
import { MetricName } from '../deps';
import type { Acquiring } from './context';
import { duplicate, otherJobUnderId } from './duplicate';
import { AcquireResult, type InboundMessage } from './result';

/**
 * A job not due yet (protocol step schedule). Within 15 minutes its copy is sent first with DelaySeconds = the whole
 * seconds left (it comes back at most a second early and waits the rest), so a crash before the write leaves this
 * message to come back and send again: a second copy at worst, whose delivery is a duplicate, never none. Later, the
 * record goes on the due index and the loader sends it within 15 minutes of its time. The record makes the job
 * known: cancellable, and a duplicate of it is dropped.
 */
export async function notDue(
  acq: Acquiring,
  message: InboundMessage,
  spec: JobSpec,
  arrival: Extract<Arrival, { kind: typeof ArrivalKind.Delay | typeof ArrivalKind.Index }>,
): Promise<AcquireResult> {
  const { schedule, ledger, queue, clock, log, metrics } = acq.deps;
  if (!schedule) throw new Error(`job ${spec.id} has a notBefore ahead, and this acquirer has no schedule store`);
  const now = clock.now();
  const record: JobRecord = { ...registeredRecord(spec, now), state: JobState.Scheduled };
  // The hint (the job is known: read it, do not try to create it) saves its delivery a write bound to fail.
  if (arrival.kind === ArrivalKind.Delay) await queue.send(encodeJobBody(spec), arrival.delaySeconds, { reserved: true });
  const index = arrival.kind === ArrivalKind.Index ? { bucket: arrival.bucket, sortKey: arrival.sortKey } : undefined;
  if (!(await schedule.schedule(record, index))) {
    const known = await ledger.get(spec.id);
    if (known && canonicalJson(known.spec) !== canonicalJson(spec)) return otherJobUnderId(acq, message, known.spec, spec);
    return duplicate(acq, known ?? record, 'known already: scheduled, or on its way');
  }
  metrics.count(MetricName.Scheduled, 1, spec.pool);
  const how = arrival.kind === ArrivalKind.Delay ? { delaySeconds: arrival.delaySeconds } : { dueIndex: arrival.bucket };
  log.info('job scheduled', { jobId: spec.id, pool: spec.pool, kind: spec.kind, notBefore: spec.notBefore, ...how });
  return AcquireResult.Scheduled;
}
