import { isTerminal, JobState } from './jobState';
import type { Step } from './protocol';

/**
 * The decisions of the lease protocol (docs/protocol.md), as pure functions of what was read. Whatever they decide is
 * written with the version that was read, so a decision on a stale read fails instead of acting.
 */

/** What an acquirer does with a delivery of a known job. */
export type DeliveryDecision = { step: Extract<Step, 'take' | 'claim' | 'resume'> } | { duplicate: string };

/** The fields of a job record the decisions read. */
export interface RecordView {
  state: JobState;
  attempt?: string;
  claimableAt?: number;
  startRequested?: boolean;
  executionId?: string;
  lease?: unknown;
  leaseUntil?: number;
}

export function onDelivery(record: RecordView, now: number): DeliveryDecision {
  switch (record.state) {
    case JobState.Queued:
      return { step: 'take' };
    // A scheduled job's delivery reaches here only once it is due (shared/domain/notBefore.ts onArrival).
    case JobState.Scheduled:
      return { step: 'take' };
    case JobState.Cancelled:
      return { duplicate: 'cancelled' };
    case JobState.Reserved:
      return { step: 'claim' };
    case JobState.Starting:
      // Another attempt owns the start until claimableAt: the start grace (longer than the function's timeout, so that
      // attempt is dead by then) or the time its retry is due. Not even the same message may resume sooner: SQS can
      // deliver one message twice at once, and two live attempts could start two runs.
      if (record.claimableAt !== undefined && now >= record.claimableAt) return { step: 'resume' };
      return { duplicate: 'being started now' };
    case JobState.Waiting:
      return { duplicate: 'waiting for a slot' };
    case JobState.Running:
      return { duplicate: 'running' };
    default:
      return { duplicate: isTerminal(record.state) ? 'already finished' : record.state };
  }
}

/** How a start call failed, as the starter classified it. */
export interface StartFailure {
  permanent: boolean;
  /** the service answered and refused: the call started nothing */
  definite: boolean;
}

export type StartFailureStep = Extract<Step, 'backoff' | 'hold' | 'giveUp' | 'giveUpKeep'>;

/**
 * After a failed start: retry (freeing the slot only if no run can exist) while the budget lasts, else give up (keeping
 * the slot if a run may exist). `mayHaveStartedBefore`: an earlier start call of this job may have started a run.
 */
export function onStartFailure(failure: StartFailure, mayHaveStartedBefore: boolean, budgetLeft: boolean): StartFailureStep {
  const mayHaveStarted = mayHaveStartedBefore || (!failure.permanent && !failure.definite);
  if (failure.permanent || !budgetLeft) return mayHaveStarted ? 'giveUpKeep' : 'giveUp';
  return mayHaveStarted ? 'hold' : 'backoff';
}

/** A dead job keeps its slot while a run it may have started (and never recorded) could still be going. */
export function keepsSlot(record: RecordView, now: number): boolean {
  return record.state === JobState.Dead && record.lease !== undefined && (record.leaseUntil === undefined || now < record.leaseUntil);
}

/** What a completion of run `executionId` does to the job the run belongs to. */
export type CompletionDecision = { step: Extract<Step, 'complete' | 'giveBack'> } | { ignore: string } | { done: true };

export function onCompletion(record: RecordView, executionId: string): CompletionDecision {
  if (record.executionId !== undefined && record.executionId !== executionId) return { ignore: `the job ran ${record.executionId}` };
  // Starting: the event beat the acquirer's "running" write (the run reference proves the run is this job's).
  if (record.state === JobState.Starting || record.state === JobState.Running) return { step: 'complete' };
  if (record.state === JobState.Dead && record.lease !== undefined) return { step: 'giveBack' };
  if (isTerminal(record.state)) return { done: true };
  return { ignore: `the job is ${record.state}` };
}
