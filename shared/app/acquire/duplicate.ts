/**
 * No protocol row: a delivery that writes nothing. A duplicate (the job is being started, waits, runs or ended, or
 * another delivery keeps moving it) is dropped; another job under a known id is dead-lettered, never run as the stored
 * one.
 */
import { canonicalJson } from '../../domain/jobBody';
import type { JobSpec } from '../../kinds/registry';
import type { JobRecord } from '../../ports/jobLedger';
import { MetricName } from '../deps';
import type { Acquiring } from './context';
import { deadLetter } from './deadLetter';
import { AcquireResult, type InboundMessage } from './result';

export function duplicate(acq: Acquiring, record: JobRecord, why: string): AcquireResult {
  acq.deps.metrics.count(MetricName.Duplicates, 1, record.pool);
  acq.deps.log.info('duplicate delivery ignored', {
    jobId: record.jobId,
    pool: record.pool,
    kind: record.kind,
    executionId: record.executionId,
    state: record.state,
    why,
  });
  return AcquireResult.Duplicate;
}

/** An idempotency key names one job: a different job under a known id is refused, never run as the stored one. */
export function otherJobUnderId(acq: Acquiring, message: InboundMessage, stored: JobSpec, received: JobSpec): Promise<AcquireResult> {
  const reason = `job id '${received.id}' was already used for a different job (${describeDifference(stored, received)})`;
  return deadLetter(acq, message.body, reason, { jobId: received.id, pool: received.pool, messageId: message.messageId }, received.kind);
}

/** Names the fields two specs disagree on, for the dead-letter reason. */
function describeDifference(stored: JobSpec, received: JobSpec): string {
  const a = stored as unknown as Record<string, unknown>;
  const b = received as unknown as Record<string, unknown>;
  const fields = [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((k) => canonicalJson(a[k]) !== canonicalJson(b[k]));
  return `differs in ${fields.join(', ') || 'field order'}`;
}
