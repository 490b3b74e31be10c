/**
 * Protocol rows `handBack`, `backoff`, `hold` and `giveUp` (shared/domain/protocol.ts): what follows a start call that
 * failed, as domain/decisions.ts onStartFailure picks it; `giveUpKeep` is ./giveUpKeep.ts.
 */
import { retryDelaySeconds, withinRetryBudget } from '../../domain/backoff';
import { onStartFailure, type StartFailureStep } from '../../domain/decisions';
import { encodeJobBody } from '../../domain/jobBody';
import { JobState } from '../../domain/jobState';
import { PROTOCOL } from '../../domain/protocol';
import { heldDemand } from '../../domain/unlimited';
import { PermanentStartError, type TransientStartError } from '../../errors';
import { type JobRecord, type Move, moved, type RecordPatch } from '../../ports/jobLedger';
import { MetricName } from '../deps';
import type { Acquiring } from './context';
import { sendToDlq } from './deadLetter';
import { duplicate } from './duplicate';
import { giveUpKeep } from './giveUpKeep';
import { AcquireResult } from './result';
import { wroteItself } from './wroteItself';

/**
 * A start failed. While the retry budget lasts the job is retried with backoff, its slot freed only if no run can
 * exist (a refusal after starts that all answered); otherwise it is dead-lettered, keeping its slot while a run it may
 * have started could still be going (the reconciler gives it back after the kind's maximum run time).
 *
 * A delivery that dies part way has its message come back, and that delivery finishes the step. A one-hop start (the
 * releaser's) has no message behind it: it makes its retry durable first (protocol step handBack: claimableAt = when
 * the retry is due, then the retry is sent), so dying at any point after leaves a retry message or a starting job past
 * claimableAt, which the reconciler re-sends. The scheduler model found the loss without it (seed 1411901457).
 */
export async function failed(
  acq: Acquiring,
  read: JobRecord,
  error: TransientStartError | PermanentStartError,
  mayHaveStartedBefore: boolean,
  oneHop: boolean,
): Promise<AcquireResult> {
  let record = read;
  const { spec } = record;
  const { settings, clock, log, metrics } = acq.deps;
  const now = clock.now();
  const permanent = error instanceof PermanentStartError;
  const budgetLeft = withinRetryBudget(record.firstStartAt ?? now, now, settings.backoff);
  const step: StartFailureStep = onStartFailure({ permanent, definite: !permanent && error.definite }, mayHaveStartedBefore, budgetLeft);
  const attempts = record.attempts + 1;
  const keys = { jobId: spec.id, pool: spec.pool, kind: spec.kind };
  // Whether a run may exist stays on the record: a refusal after starts that all answered leaves none.
  const startRequested = PROTOCOL[step].slot !== 'release';
  const move = (patch: RecordPatch, to = PROTOCOL[step].to): Move => ({
    jobId: spec.id,
    version: record.version,
    to,
    patch: { attempts, lastError: error.message, startRequested, ...patch },
  });
  const delay = retryDelaySeconds(attempts, settings.backoff, acq.deps.random);
  // Hold and handBack: the retry message resumes the start when it arrives (claimableAt), looking for a run first if
  // one may exist.
  const retryDue = now + Math.max(0, delay - 1) * 1000;
  let retrySent = false;
  if (oneHop) {
    const handBack = move({ claimableAt: retryDue }, PROTOCOL.handBack.to);
    if (!(await acq.deps.ledger.move(handBack, now)) && !(await wroteItself(acq, record, handBack)))
      return duplicate(acq, record, 'moved on while its start failed');
    record = moved(record, handBack, now);
    await acq.deps.queue.send(encodeJobBody(spec), delay);
    retrySent = true;
  }
  switch (step) {
    case 'backoff':
    case 'hold': {
      const retry = step === 'backoff' ? move({}) : move({ claimableAt: retryDue });
      const applied = step === 'backoff' ? await releaseHeld(acq, record, retry) : retrySent || (await acq.deps.ledger.move(retry, now));
      if (!applied && !(await wroteItself(acq, record, retry))) return duplicate(acq, record, 'moved on while its start failed');
      if (!retrySent) await acq.deps.queue.send(encodeJobBody(spec), delay);
      metrics.count(MetricName.Retries, 1, spec.pool);
      log.warn('start failed, will retry', { ...keys, attempts, delaySeconds: delay, keepsSlot: step === 'hold', error: error.message });
      return AcquireResult.RetryScheduled;
    }
    case 'giveUp':
    case 'giveUpKeep': {
      const spent = budgetLeft || permanent ? error.message : `gave up after ${attempts} attempts: ${error.message}`;
      // Whoever sends it again should know a run may exist (its start got no answer).
      const reason = step === 'giveUpKeep' ? `${spent} (a run may have started: check the job API before sending the job again)` : spent;
      if (step === 'giveUp') {
        const giveUp = move({ lastError: reason });
        if (!(await releaseHeld(acq, record, giveUp)) && !(await wroteItself(acq, record, giveUp)))
          return duplicate(acq, record, 'moved on while its start failed');
        return sendToDlq(acq, { ...record, state: JobState.Dead, version: record.version + 1 }, reason);
      }
      return giveUpKeep(acq, record, move, reason);
    }
  }
}

/**
 * Gives the slot back as the record holds it. The reconciler may have counted an uncounted slot since it was read
 * (`adopt`: no version added), so a release decided on the uncounted read fails its condition: read again, and at the
 * same version give it back as counted.
 */
async function releaseHeld(acq: Acquiring, record: JobRecord, move: Move): Promise<boolean> {
  if (await acq.handOff.release(heldDemand(record.spec, record.lease), move)) return true;
  const now = await acq.deps.ledger.get(record.jobId);
  if (now?.version !== move.version || !now.lease || now.lease.uncounted === record.lease?.uncounted) return false;
  return acq.handOff.release(heldDemand(now.spec, now.lease), move);
}
