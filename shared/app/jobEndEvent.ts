import { JobState } from '../domain/jobState';
import { kindOf } from '../kinds/registry';
import type { JobRecord } from '../ports/jobLedger';

/** How a job ended, as its `Sluice Job Ended` event says. */
export const JobEndOutcome = {
  Succeeded: 'succeeded',
  Failed: 'failed',
  /** it can never run, or its start was given up: in the dead-letter queue with `reason` */
  DeadLettered: 'dead-lettered',
  /** `sluice cancel` before it started */
  Cancelled: 'cancelled',
} as const;
export type JobEndOutcome = (typeof JobEndOutcome)[keyof typeof JobEndOutcome];

const OUTCOME_OF: Partial<Record<JobState, JobEndOutcome>> = {
  [JobState.Succeeded]: JobEndOutcome.Succeeded,
  [JobState.Failed]: JobEndOutcome.Failed,
  [JobState.Dead]: JobEndOutcome.DeadLettered,
  [JobState.Cancelled]: JobEndOutcome.Cancelled,
};

/** A reason is the job's last error, which may quote the service at length: the event carries its start. */
export const MAX_REASON_CHARS = 2_000;

const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());

/**
 * The detail of a job's `Sluice Job Ended` event, from its record as the final write left it: what a rule on the bus
 * needs to alert on a failure or start a next step (its id, pool, kind and target, how it ended and why, its run, its
 * attempts and times). Undefined for a record that is not final. A callback job's run id is left out: it is what its
 * reports are checked against, and the bus is readable by whoever may write rules.
 */
/** The first `max` UTF-16 units of `text`, one fewer if the cut would leave half of a surrogate pair (an emoji, say). */
function wholeCharacters(text: string, max: number): string {
  if (text.length <= max) return text;
  const last = text.charCodeAt(max - 1);
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? max - 1 : max);
}

export function jobEndDetail(record: JobRecord, now: number): Record<string, unknown> | undefined {
  const outcome = OUTCOME_OF[record.state];
  if (!outcome) return undefined;
  const { spec } = record;
  let target: string | undefined;
  try {
    target = kindOf(record.kind).target(spec as never);
  } catch {
    target = undefined; // a kind this version does not know: the event still goes, without its target
  }
  const reason = record.lastError === undefined ? undefined : wholeCharacters(record.lastError, MAX_REASON_CHARS);
  const detail: Record<string, unknown> = {
    jobId: record.jobId,
    pool: record.pool,
    kind: record.kind,
    target,
    outcome,
    reason,
    runId: record.kind === 'callback' ? undefined : record.executionId,
    attempts: record.attempts,
    queuedAt: iso(record.firstSeenAt),
    startedAt: iso(record.startedAt),
    endedAt: iso(record.endedAt ?? now),
    jobSet: spec.jobSet,
  };
  return Object.fromEntries(Object.entries(detail).filter(([, value]) => value !== undefined));
}
