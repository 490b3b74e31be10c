import { RunOutcome } from './job';
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
  /** queued again because run `replacesRun` ended without starting: that run is dealt with */
  replacesRun?: string;
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

/** What a completion of run `executionId` does to the job the run belongs to. */
export type CompletionDecision = { step: Extract<Step, 'complete' | 'giveBack'> } | { ignore: string } | { done: true };

export function onCompletion(record: RecordView, executionId: string): CompletionDecision {
  if (record.executionId !== undefined && record.executionId !== executionId) return { ignore: `the job ran ${record.executionId}` };
  // A run that ended without starting and that the job was queued again for: a second copy of its end (a duplicate
  // event, a noted report handed back again) must not queue it again while its next attempt, still naming that run
  // (a patch cannot remove executionId), is starting.
  if (record.replacesRun === executionId) return { done: true };
  // Starting: the event beat the acquirer's "running" write (the run reference proves the run is this job's).
  if (record.state === JobState.Starting || record.state === JobState.Running) return { step: 'complete' };
  if (record.state === JobState.Dead && record.lease !== undefined) return { step: 'giveBack' };
  if (isTerminal(record.state)) return { done: true };
  return { ignore: `the job is ${record.state}` };
}

/**
 * What the job API said of a run when the reconciler asked: it ended (with its outcome); it no longer knows the run (its
 * flow, job or task deleted, or the run dropped from the API's history); it goes on (or its answer says nothing); or it
 * could not be asked (throttled, a 5xx, a timeout, an error of any kind).
 */
export type RunAnswer = { ended: RunOutcome } | typeof Answer.Gone | typeof Answer.Going | typeof Answer.Unanswered;
export const Answer = { Gone: 'gone', Going: 'going', Unanswered: 'unanswered' } as const;

/**
 * A "does not exist" is trusted only for a run recorded at least this long ago (or its kind's maximum run time, if
 * shorter). AWS's describe APIs are eventually consistent: a resource just created may be reported missing for a while,
 * and AWS tells callers to retry such an answer with backoff "up to a few minutes"
 * (https://docs.aws.amazon.com/ec2/latest/devguide/eventual-consistency.html,
 * https://docs.aws.amazon.com/AmazonECS/latest/APIReference/API_RunTask.html). Twice that is well past it. A rule on the
 * run's age needs no state between reconciles (a rule of "seen gone twice" would need a write, or forget on every cold
 * start), and a run legitimately dropped from the API's history (Batch, about a day after it ends) is much older.
 */
export const GONE_GRACE_MS = 10 * 60_000;

/** When the run's deadline is, for a kind whose runs Sluice judges (no API to ask: callback jobs). */
export interface Deadline {
  /** epoch ms */
  at: number;
  reason: string;
}

/** What the reconciler knows of a running job's run. */
export interface RunView {
  answer: RunAnswer;
  now: number;
  /** when its run was recorded (the start answered) */
  startedAt: number;
  /** its kind's maximum run time */
  maxRunMs: number;
  /**
   * For a kind whose runs Sluice judges (KindDefinition.runDeadline: no API can say a run ended), the run's own
   * deadline (`undefined` for a job without one); absent for kinds with an API to ask.
   */
  judged?: { deadline?: Deadline };
}

/** A run past its kind's maximum run time that goes on (or cannot be asked about): how long it has run. */
export interface Overdue {
  ranMs: number;
  maxRunMs: number;
}

export type RunDecision =
  /** the run ended, or the API can no longer be asked about it: `complete` with this outcome */
  | { step: 'complete'; outcome: RunOutcome; why: typeof Because.Ended | typeof Because.Gone }
  /** a judged run past its own deadline (or its kind's maximum): ended as failed, fenced by the version read */
  | { step: 'complete'; outcome: typeof RunOutcome.Failed; why: typeof Because.Deadline; reason: string }
  /** the slot stays; `overdue` when the run is past its kind's maximum run time (an alarm and a log line, each time) */
  | { keep: true; overdue?: Overdue };

export const Because = { Ended: 'ended', Gone: 'gone', Deadline: 'deadline' } as const;

/** The maximum run time as a deadline (a judged run's own deadline is capped by it). */
export const maxRunReason = (maxRunMs: number): string => `exceeded the maximum run time of ${Math.round(maxRunMs / 1000)} s`;

/**
 * What the reconciler does with a running job's slot. A slot is released only when the run is known ended (the API
 * said so), or the API can no longer be asked about it (`gone`, and not so recently recorded that the answer may be the
 * API's eventual consistency), or, for a kind with no API to ask, when Sluice's own deadline for it passed. A run past
 * its kind's maximum run time that goes on, or that cannot be asked about for now, keeps its slot: it is reported as
 * overdue instead (freeing its slot would let one more run start than the limit while it goes on).
 */
export function onRunCheck(run: RunView): RunDecision {
  const { answer, now, startedAt, maxRunMs } = run;
  if (typeof answer === 'object') return { step: 'complete', outcome: answer.ended, why: Because.Ended };
  if (run.judged) {
    const cap: Deadline = { at: startedAt + maxRunMs, reason: maxRunReason(maxRunMs) };
    const own = run.judged.deadline;
    const deadline = own && own.at <= cap.at ? own : cap;
    if (now > deadline.at) return { step: 'complete', outcome: RunOutcome.Failed, why: Because.Deadline, reason: deadline.reason };
  }
  if (answer === Answer.Gone && goneIsTrusted(startedAt, now, maxRunMs))
    return { step: 'complete', outcome: RunOutcome.Failed, why: Because.Gone };
  return now - startedAt > maxRunMs ? { keep: true, overdue: { ranMs: now - startedAt, maxRunMs } } : { keep: true };
}

/** Whether a "does not exist" for a run recorded at `startedAt` can be believed (see GONE_GRACE_MS). */
export function goneIsTrusted(startedAt: number, now: number, maxRunMs: number): boolean {
  return now - startedAt >= Math.min(GONE_GRACE_MS, maxRunMs);
}

/** What the reconciler knows of a dead job keeping its slot for a run of unknown outcome. */
export interface KeptSlotView {
  now: number;
  /** until when the slot is kept (set by `giveUpKeep`) */
  leaseUntil?: number;
  /**
   * The API's answer about its run, when the run's id is known (found after the give-up, or known before the start):
   * absent when no run id is known, or for a kind Sluice judges (nothing to ask).
   */
  answer?: RunAnswer;
  /** when that run was recorded */
  startedAt?: number;
  maxRunMs: number;
}

export type KeptSlotDecision = { step: 'giveBack'; why: string } | { keep: true; overdue?: Overdue };

/**
 * A dead job keeps its slot while a run it may have started could still be going. With the run's id known and an API
 * to ask, the slot comes back only as for a running job: the run ended, or the API no longer knows it; past leaseUntil
 * it is reported overdue and kept. Without a run id (nothing can be asked) or for a kind Sluice judges, it comes back
 * at leaseUntil: the longest such a run may go (its own deadline, or its kind's maximum run time).
 */
export function onKeptSlot(slot: KeptSlotView): KeptSlotDecision {
  const { answer, now, leaseUntil, maxRunMs } = slot;
  const pastLease = leaseUntil !== undefined && now >= leaseUntil;
  if (answer !== undefined && typeof answer === 'object') return { step: 'giveBack', why: 'its run ended' };
  if (answer === Answer.Gone && slot.startedAt !== undefined && goneIsTrusted(slot.startedAt, now, maxRunMs))
    return { step: 'giveBack', why: 'the job API no longer knows its run' };
  if (answer === undefined) return pastLease ? { step: 'giveBack', why: 'leaseUntil passed' } : { keep: true };
  if (!pastLease) return { keep: true };
  const since = slot.startedAt ?? leaseUntil! - maxRunMs;
  return { keep: true, overdue: { ranMs: now - since, maxRunMs } };
}

/**
 * Until when a job given up after a start of unknown outcome keeps its slot: its kind's maximum run time, or sooner the
 * run's own deadline when it has one (a callback job's timeout). `deadline` is that deadline for a run starting now
 * and heartbeating all along: a dead job's heartbeats are not recorded, so only its timeout bounds it.
 */
export function keptSlotUntil(now: number, maxRunMs: number, deadline?: Pick<Deadline, 'at'>): number {
  return Math.min(now + maxRunMs, deadline?.at ?? Number.POSITIVE_INFINITY);
}
