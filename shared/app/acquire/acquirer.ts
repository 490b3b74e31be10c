/**
 * The acquirer's dispatcher (docs/protocol.md, "When each row happens": a delivery): parse, arrival, read or register,
 * then one protocol row after another as domain/decisions.ts onDelivery picks it, until one ends the delivery. Row
 * `register` is here (a first delivery's record, written by its first move); each other row is a file of this folder.
 */
import { onDelivery } from '../../domain/decisions';
import { FullHints } from '../../domain/fullHint';
import { canonicalJson } from '../../domain/jobBody';
import { JobState } from '../../domain/jobState';
import { ArrivalKind, dueAtOf, onArrival } from '../../domain/notBefore';
import { PROTOCOL } from '../../domain/protocol';
import type { Waiter } from '../../domain/waiting';
import { tickOf } from '../../domain/tick';
import { startAttempt } from '../../domain/startAttempt';
import { ContentionError, InvalidJobError } from '../../errors';
import type { JobSpec } from '../../kinds/registry';
import { type JobRecord, type Move, type RecordPatch, registeredRecord } from '../../ports/jobLedger';
import { CompleteRun } from '../completeRun';
import type { SluiceDeps } from '../deps';
import { HandOff } from '../handOff';
import { parseJob } from '../parseJob';
import { claim } from './claim';
import { type Acquiring, type Delivery, type DeliveryStep, MAX_ROUNDS, MOVED, type StepHandler, TAKE_AGAIN, viaOf } from './context';
import { deadLetter, sendToDlq } from './deadLetter';
import { duplicate, otherJobUnderId } from './duplicate';
import { AcquireResult, type InboundMessage } from './result';
import { resume } from './resume';
import { notDue } from './schedule';
import { start } from './start';
import { take } from './take';
import { admit } from '../admission';

/** The row each decision of a delivery leads to. */
const STEPS: Record<DeliveryStep, StepHandler> = { take, claim, resume };

/**
 * The acquirer: one job message in, one decision out (docs/protocol.md). Takes a slot, or claims the one reserved for
 * the job, and starts the run; parks the job when its pool is full; dead-letters what can never run. Every write is
 * fenced by the version of the record it was decided on. Every path ends with the message safe to delete: the job is
 * running, parked in the table, sent again, in the DLQ, or owned by another delivery.
 */
export class Acquirer {
  private readonly acq: Acquiring;

  constructor(deps: SluiceDeps) {
    this.acq = {
      deps,
      handOff: new HandOff(deps),
      completeRun: new CompleteRun(deps),
      fullHints: new FullHints(),
      followedUnlimited: new Set(),
    };
  }

  async process(message: InboundMessage): Promise<AcquireResult> {
    const { acq } = this;
    const tick = tickOf(message.body);
    if (tick !== undefined) {
      await acq.handOff.fill(tick);
      return AcquireResult.Tick;
    }
    let spec: JobSpec;
    try {
      spec = parseJob(message.body, message.messageId);
      await admit(acq.deps, spec);
    } catch (error) {
      if (error instanceof InvalidJobError) return deadLetter(acq, message.body, error.message, { messageId: message.messageId });
      throw error;
    }
    const { ledger, clock } = acq.deps;
    // A job with a notBefore ahead: waited for here if due within a second (a delay is whole seconds), else registered
    // scheduled and brought back when due (shared/domain/notBefore.ts). Its slot is taken only once it is due.
    const arrival = onArrival(dueAtOf(spec), clock.now(), spec.id);
    if (arrival.kind === ArrivalKind.Wait) await clock.sleepUntil(arrival.until);
    else if (arrival.kind !== ArrivalKind.Now) return notDue(acq, message, spec, arrival);
    // A job let in by a hand-off is in the ledger already: read it. A first delivery's record is not written on its own:
    // its first write (take or park) creates it in the same transaction (register as part of that write); if the job
    // has a record already, that write fails and the delivery reads the record and decides again (`unsaved` false).
    const known = message.reservedHint ? await ledger.get(spec.id) : undefined;
    let record = known ?? registeredRecord(spec, clock.now());
    if (known && canonicalJson(known.spec) !== canonicalJson(spec)) return otherJobUnderId(acq, message, known.spec, spec);
    const delivery: Delivery = {
      message,
      spec,
      unsaved: !known,
      // Not the message id alone: SQS may deliver one message twice at once.
      attempt: startAttempt(message.messageId, acq.deps.random),
      handOffSentAt: message.reservedHint ? message.sentAt : undefined,
      via: { oneHop: message.oneHop === true },
    };
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const now = clock.now();
      // A job given up by an invocation that died before its DLQ copy was noted: send it (again) now.
      if (record.state === JobState.Dead && record.deadLetteredAt === undefined)
        return sendToDlq(acq, record, record.lastError ?? 'dead', message);
      const decision = onDelivery(record, now);
      if ('duplicate' in decision) return duplicate(acq, record, decision.duplicate);
      const outcome = await STEPS[decision.step](acq, delivery, record, startMove(acq, record, decision.step, delivery.attempt, now), now);
      if (outcome === TAKE_AGAIN) continue;
      if (outcome !== MOVED) return outcome;
      const again = await this.readAgain(delivery, record, decision.step);
      if (typeof again === 'string') return again;
      record = again;
    }
    // Never "handled" for a job that is not registered: its message must come back (it is not deleted).
    if (delivery.unsaved)
      throw new ContentionError(`job ${record.jobId}: its first write kept failing after ${MAX_ROUNDS} tries; its message comes back`);
    return duplicate(acq, record, 'other deliveries keep moving it');
  }

  /**
   * Starts a job a release just handed a slot to, in the releaser's invocation (one hop). `attempt`: the pass moved it
   * to starting under that attempt (row `receiveStarting`): read, it is started as a claim of this invocation would be.
   * Otherwise (a reservation, or the record shows another attempt by now) it is decided as its wake-up message would
   * be: a reserved job is claimed, fenced by the record's version, so a wake-up sent as well (by the reconciler, say)
   * finds it claimed. `handedOffAt` is when the slot was handed over (for HandOffLatency).
   */
  async startHandedOff(waiter: Pick<Waiter, 'jobId' | 'body'>, handedOffAt: number, attempt?: string): Promise<AcquireResult> {
    if (attempt !== undefined) {
      const record = await this.acq.deps.ledger.get(waiter.jobId);
      // No start of unknown outcome is left on a job that held no slot (every row that gives a slot back after a start
      // was asked for found the start refused): the start need not look for a run first.
      if (record?.state === JobState.Starting && record.attempt === attempt)
        return start(this.acq, record, false, { oneHop: true, handOffSentAt: handedOffAt });
    }
    return this.process({
      messageId: `hand-off:${waiter.jobId}`,
      body: waiter.body,
      reservedHint: true,
      sentAt: handedOffAt,
      oneHop: true,
    });
  }

  /**
   * Another writer moved the job since it was read, or our own write applied and its answer was lost: look. The record
   * to decide on next, or the delivery's answer (another job under its id; its own write: the start goes on).
   */
  private async readAgain(delivery: Delivery, record: JobRecord, step: DeliveryStep): Promise<JobRecord | AcquireResult> {
    const again = await this.acq.deps.ledger.get(record.jobId);
    if (!again) throw new Error(`job ${record.jobId} vanished from the ledger`);
    if (delivery.unsaved) {
      // A first delivery's write found the job registered already: the same job (a duplicate), or another one.
      delivery.unsaved = false;
      if (canonicalJson(again.spec) !== canonicalJson(delivery.spec))
        return otherJobUnderId(this.acq, delivery.message, again.spec, delivery.spec);
    }
    if (again.attempt === delivery.attempt && again.version === record.version + 1 && again.state === JobState.Starting) {
      return start(this.acq, again, record.startRequested === true, viaOf(delivery, step));
    }
    return again;
  }
}

/** The write of `take`, `claim` and `resume`: once a start is asked for, a run may exist whatever the answer, so every later start looks for it first. */
function startMove(acq: Acquiring, record: JobRecord, step: DeliveryStep, attempt: string, now: number): Move {
  const claim: RecordPatch = {
    startRequested: true,
    attempt,
    claimableAt: now + acq.deps.settings.startGraceMs,
    firstStartAt: record.firstStartAt ?? now,
  };
  return { jobId: record.jobId, version: record.version, to: PROTOCOL[step].to, patch: claim };
}
