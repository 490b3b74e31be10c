import type { SQSClient } from '@aws-sdk/client-sqs';
import { JobState } from '../domain/jobState';
import type { JobLedger } from '../ports/jobLedger';
import { type DeadLetter, parseObject, resend, withDeadLetters } from './deadLetters';

export const RedriveOutcome = { Resent: 'resent', Skipped: 'skipped' } as const;
export type RedriveOutcome = (typeof RedriveOutcome)[keyof typeof RedriveOutcome];

export interface RedriveResult {
  messageId: string;
  jobId?: string;
  outcome: RedriveOutcome;
  /** why a message was skipped (it stays in the DLQ) */
  reason?: string;
}

export interface RedriveTargets {
  sqs: SQSClient;
  ledger: Pick<JobLedger, 'get' | 'forget'>;
  queueUrl: string;
  dlqUrl: string;
}

/**
 * Sends dead-lettered jobs to the job queue again with their original bodies (after their cause was fixed: a pool
 * created, a name allowed), and deletes them from the DLQ. `ids`: the job ids to redrive; undefined: every message.
 *
 * The ledger keeps a dead job as `dead`, and a job id it knows is never started again, so the dead record is removed
 * first: only a record that is dead, holds no slot and never asked for a start (no run can exist under its id: an
 * AppFlow client token `sluice-<id>` or a Glue `--sluice-job-id` would find and adopt that run), and only at the
 * version read. That is what DynamoDB TTL does to it later anyway. A job whose record is in any other state is skipped
 * with the reason, and so is a copy that was cut (a body within a few KB of SQS's 1 MiB, far over what a job may be),
 * and a message whose body is not a JSON object (no job: it would be dead-lettered again at once).
 */
export async function redriveDeadLetters(targets: RedriveTargets, ids: readonly string[] | undefined): Promise<RedriveResult[]> {
  return withDeadLetters(targets.sqs, targets.dlqUrl, 10_000, async (letters) => {
    const results: RedriveResult[] = [];
    const deleted = new Set<string>();
    const wanted = ids ? new Set(ids) : undefined;
    for (const letter of letters) {
      if (wanted && (letter.jobId === undefined || !wanted.has(letter.jobId))) continue;
      const skip = await whyNot(targets, letter);
      const base = { messageId: letter.messageId, ...(letter.jobId !== undefined && { jobId: letter.jobId }) };
      if (skip) {
        results.push({ ...base, outcome: RedriveOutcome.Skipped, reason: skip });
        continue;
      }
      await resend(targets.sqs, targets.queueUrl, targets.dlqUrl, letter);
      deleted.add(letter.messageId);
      results.push({ ...base, outcome: RedriveOutcome.Resent });
    }
    return { result: results, deleted };
  });
}

/** Why this letter cannot be sent again now, or undefined (and then its dead record, if any, is gone). */
async function whyNot(targets: RedriveTargets, letter: DeadLetter): Promise<string | undefined> {
  if (letter.truncatedFrom !== undefined)
    return `its copy was cut to fit SQS's 1 MiB from ${letter.truncatedFrom} bytes (a job spec may be at most 64 KiB): send the job yourself`;
  // Never a job: sent again, it would come straight back to the DLQ.
  if (!parseObject(letter.body)) return 'not a job (its body is not a JSON object): sending it again would only dead-letter it again';
  if (letter.jobId === undefined) return undefined;
  const record = await targets.ledger.get(letter.jobId);
  if (!record) return undefined;
  if (record.state !== JobState.Dead)
    return `job ${record.jobId} is ${record.state} in the ledger (another copy of it got in): not sent again`;
  if (record.lease) return `job ${record.jobId} still holds a slot for a run it may have started: redrive it after that slot is given back`;
  if (record.startRequested || record.executionId)
    return `a run may exist under job id ${record.jobId} (a start was asked for): send the job again with a new id`;
  return (await targets.ledger.forget(record.jobId, record.version))
    ? undefined
    : `job ${record.jobId} changed while it was being redriven: try again`;
}
