import { delaySecondsUntil, withinRetryBudget, retryDelaySeconds } from '../domain/backoff';
import { keptSlotUntil, onDelivery, onStartFailure, type StartFailureStep } from '../domain/decisions';
import { demandOf } from '../domain/job';
import { canonicalJson, encodeJobBody } from '../domain/jobBody';
import { JobState } from '../domain/jobState';
import { tickOf } from '../domain/tick';
import { type Arrival, ArrivalKind, dueAtOf, onArrival } from '../domain/notBefore';
import { bookingIsStale } from '../domain/rate';
import { gatesOf, isKeyGate, keyOf } from '../domain/limits';
import { FullHints } from '../domain/fullHint';
import { PROTOCOL } from '../domain/protocol';
import { kindOf, type JobSpec } from '../kinds/registry';
import {
  ContentionError,
  InvalidJobError,
  PermanentStartError,
  TransientStartError,
  UnknownLimitError,
  UnknownPoolError,
  WeightTooLargeError,
} from '../errors';
import { type JobRecord, type Move, moved, type RecordPatch, registeredRecord } from '../ports/jobLedger';
import { ClaimOutcome, TakeOutcome, type TakeResult } from '../ports/leaseStore';
import { CompleteRun } from './completeRun';
import { MetricName, type SluiceDeps } from './deps';
import { blockedBy, blockingGate, createConfiguredGate, overLimitGate } from './gates';
import { HandOff } from './handOff';
import { jobEnded } from './jobSetEnds';
import { ensureTick } from './ticks';
import { parseJob } from './parseJob';
import { revokeReservation } from './revoke';
import { waiterFor } from './waiters';
import type { Waiter } from '../domain/waiting';

export const AcquireResult = {
  Started: 'started',
  Waiting: 'waiting',
  Duplicate: 'duplicate',
  RetryScheduled: 'retry-scheduled',
  DeadLettered: 'dead-lettered',
  /** a limit's tick: the jobs waiting for its start rate were let in */
  Tick: 'tick',
  /** not due yet (notBefore): registered scheduled; its delayed copy or the loader brings it back when due */
  Scheduled: 'scheduled',
} as const;
export type AcquireResult = (typeof AcquireResult)[keyof typeof AcquireResult];

export interface InboundMessage {
  messageId: string;
  body: string;
  /**
   * The sender says the job is known (a hand-off's reserved slot, or a scheduled job sent when due), so it is read, not
   * registered.
   */
  reservedHint?: boolean;
  /**
   * When the message was sent (epoch ms, SQS SentTimestamp), or the slot handed over when the releaser starts the job
   * itself: a reserved job's start reports its hand-off latency from it.
   */
  sentAt?: number;
  /**
   * No message stands behind this start: the releaser starts the job it handed a slot to in its own invocation (one
   * hop), and its completion event, if retried, does not lead back to this job. See `failed`.
   */
  oneHop?: boolean;
}

/** The message being handled, as its DLQ copy keeps it: its body byte for byte, its id as an attribute. */
type Delivered = Pick<InboundMessage, 'messageId' | 'body'>;

/** How a start came about: in the releaser's own invocation (one hop), and when its slot was handed over. */
interface StartVia {
  oneHop: boolean;
  handOffSentAt?: number;
}

/** The take failed for want of room that is there now (or a limit just created): take again. */
const TAKE_AGAIN = 'take-again';

/** Reads lost to concurrent writers before a delivery gives up (each loss means another writer moved the job on). */
const MAX_ROUNDS = 10;

/** A late start whose new booking lost every race books again this much later (its message comes back then). */
const CONTENDED_BOOKING_RETRY_MS = 1_000;

/**
 * The acquirer: one job message in, one decision out (docs/protocol.md). Takes a slot, or claims the one reserved for
 * the job, and starts the run; parks the job when its pool is full; dead-letters what can never run. Every write is
 * fenced by the version of the record it was decided on. Every path ends with the message safe to delete: the job is
 * running, parked in the table, sent again, in the DLQ, or owned by another delivery.
 */
export class Acquirer {
  private readonly handOff: HandOff;
  private readonly completeRun: CompleteRun;
  /** Pools this environment saw full a moment ago (domain/fullHint.ts). */
  private readonly fullHints = new FullHints();

  constructor(private readonly deps: SluiceDeps) {
    this.handOff = new HandOff(deps);
    this.completeRun = new CompleteRun(deps);
  }

  async process(message: InboundMessage): Promise<AcquireResult> {
    const tick = tickOf(message.body);
    if (tick !== undefined) {
      await this.handOff.fill(tick);
      return AcquireResult.Tick;
    }
    let spec: JobSpec;
    try {
      spec = parseJob(message.body, message.messageId, this.deps.settings.overrides ?? {});
    } catch (error) {
      if (error instanceof InvalidJobError) return this.deadLetter(message.body, error.message, { messageId: message.messageId });
      throw error;
    }
    const { ledger, clock } = this.deps;
    // A job with a notBefore ahead: waited for here if due within a second (a delay is whole seconds), else registered
    // scheduled and brought back when due (shared/domain/notBefore.ts). Its slot is taken only once it is due.
    const arrival = onArrival(dueAtOf(spec), clock.now(), spec.id);
    if (arrival.kind === ArrivalKind.Wait) await clock.sleepUntil(arrival.until);
    else if (arrival.kind !== ArrivalKind.Now) return this.notDue(message, spec, arrival);
    // A job let in by a hand-off is in the ledger already: read it. A first delivery's record is not written on its own:
    // its first write (take or park) creates it in the same transaction (register as part of that write); if the job
    // has a record already, that write fails and the delivery reads the record and decides again (`unsaved` false).
    const known = message.reservedHint ? await ledger.get(spec.id) : undefined;
    let record = known ?? registeredRecord(spec, clock.now());
    let unsaved = !known;
    if (known && canonicalJson(known.spec) !== canonicalJson(spec)) return this.otherJobUnderId(message, known.spec, spec);
    // Names this invocation's claim on the record: a write whose answer was lost (the SDK's retry then meets its own
    // effect and fails) is recognised as ours by it. Not the message id alone: SQS may deliver one message twice at once.
    const attempt = `${message.messageId}/${Math.floor(this.deps.random() * 2 ** 32).toString(36)}`;
    // A reserved job's start reports its hand-off latency, from when its wake-up was sent.
    const handOffSentAt = message.reservedHint ? message.sentAt : undefined;
    const via: StartVia = { oneHop: message.oneHop === true };
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const now = clock.now();
      // A job given up by an invocation that died before its DLQ copy was noted: send it (again) now.
      if (record.state === JobState.Dead && record.deadLetteredAt === undefined)
        return this.sendToDlq(record, record.lastError ?? 'dead', message);
      const decision = onDelivery(record, now);
      if ('duplicate' in decision) return this.duplicate(record, decision.duplicate);
      // Once a start is asked for, a run may exist whatever the answer: every later start looks for it first.
      const claim: RecordPatch = {
        startRequested: true,
        attempt,
        claimableAt: now + this.deps.settings.startGraceMs,
        firstStartAt: record.firstStartAt ?? now,
      };
      const move: Move = { jobId: record.jobId, version: record.version, to: PROTOCOL[decision.step].to, patch: claim };
      if (decision.step === 'take') {
        const demand = demandOf(record.spec);
        // A first delivery for a pool this environment just saw full parks at once (no take bound to fail); the look at
        // the counter after parking lets it in if a slot was free after all.
        const hinted = unsaved && gatesOf(demand).length === 1 ? this.fullHints.fullCounter(demand.pool, demand.units, now) : undefined;
        if (hinted) {
          const next = await this.cannotTake(record, unsaved, { counter: hinted }, message);
          if (next === TAKE_AGAIN) {
            this.fullHints.forget(demand.pool);
            continue;
          }
          if (next) return next;
        } else {
          const { outcome, startAt, seen, gate } = await this.deps.leases.take(demand, move, now, unsaved ? record : undefined);
          if (outcome === TakeOutcome.Taken) {
            this.fullHints.forget(demand.pool);
            return this.start(
              { ...moved(record, move, now), ...(startAt !== undefined && { startAt }) },
              record.startRequested === true,
              via,
            );
          }
          if (outcome === TakeOutcome.Full && seen?.counter) this.fullHints.noteFull(demand.pool, seen.counter, demand.units, now);
          if (outcome !== TakeOutcome.Stale) {
            // Contention, not fullness (other admissions kept winning the race for a limit's counter): unless a limit
            // is missing or full after all, the job waits on that limit's list, registered for good, and a release,
            // the limit's tick or the reconciler lets it in.
            const contended = outcome === TakeOutcome.Contended ? (gate ?? demand.pool) : undefined;
            const next = await this.cannotTake(record, unsaved, contended ? undefined : seen, message, contended);
            if (next === TAKE_AGAIN) continue; // room was made meanwhile, or the limit was created
            if (next) return next;
          }
        }
      } else if (decision.step === 'claim') {
        const outcome = await this.deps.leases.claim(demandOf(record.spec), move, now);
        if (outcome === ClaimOutcome.Claimed)
          return this.start(moved(record, move, now), record.startRequested === true, { ...via, handOffSentAt });
        const overGate = outcome === ClaimOutcome.OverLimit ? await overLimitGate(this.deps.leases, demandOf(record.spec)) : undefined;
        if (overGate !== undefined && (await revokeReservation(this.deps, record, overGate))) {
          this.deps.log.info('reservation taken back: the pool is over its lowered limit', {
            jobId: record.jobId,
            pool: record.pool,
            kind: record.kind,
          });
          return AcquireResult.Waiting;
        }
      } else {
        this.deps.log.warn('resuming a job whose start was interrupted', { jobId: record.jobId, pool: record.pool, kind: record.kind });
        if (await ledger.move(move, now)) return this.start(moved(record, move, now), record.startRequested === true, via);
      }
      // Another writer moved the job since it was read, or our own write applied and its answer was lost: look.
      const again = await ledger.get(record.jobId);
      if (!again) throw new Error(`job ${record.jobId} vanished from the ledger`);
      if (unsaved) {
        // A first delivery's write found the job registered already: the same job (a duplicate), or another one.
        unsaved = false;
        if (canonicalJson(again.spec) !== canonicalJson(spec)) return this.otherJobUnderId(message, again.spec, spec);
      }
      if (again.attempt === attempt && again.version === record.version + 1 && again.state === JobState.Starting) {
        return this.start(again, record.startRequested === true, decision.step === 'claim' ? { ...via, handOffSentAt } : via);
      }
      record = again;
    }
    // Never "handled" for a job that is not registered: its message must come back (it is not deleted).
    if (unsaved)
      throw new ContentionError(`job ${record.jobId}: its first write kept failing after ${MAX_ROUNDS} tries; its message comes back`);
    return this.duplicate(record, 'other deliveries keep moving it');
  }

  /**
   * A job not due yet (protocol step schedule). Within 15 minutes its copy is sent first with DelaySeconds = the whole
   * seconds left (it comes back at most a second early and waits the rest), so a crash before the write leaves this
   * message to come back and send again: a second copy at worst, whose delivery is a duplicate, never none. Later, the
   * record goes on the due index and the loader sends it within 15 minutes of its time. The record makes the job
   * known: cancellable, and a duplicate of it is dropped.
   */
  private async notDue(
    message: InboundMessage,
    spec: JobSpec,
    arrival: Extract<Arrival, { kind: typeof ArrivalKind.Delay | typeof ArrivalKind.Index }>,
  ): Promise<AcquireResult> {
    const { schedule, ledger, queue, clock, log, metrics } = this.deps;
    if (!schedule) throw new Error(`job ${spec.id} has a notBefore ahead, and this acquirer has no schedule store`);
    const now = clock.now();
    const record: JobRecord = { ...registeredRecord(spec, now), state: JobState.Scheduled };
    // The hint (the job is known: read it, do not try to create it) saves its delivery a write bound to fail.
    if (arrival.kind === ArrivalKind.Delay) await queue.send(encodeJobBody(spec), arrival.delaySeconds, { reserved: true });
    const index = arrival.kind === ArrivalKind.Index ? { bucket: arrival.bucket, sortKey: arrival.sortKey } : undefined;
    if (!(await schedule.schedule(record, index))) {
      const known = await ledger.get(spec.id);
      if (known && canonicalJson(known.spec) !== canonicalJson(spec)) return this.otherJobUnderId(message, known.spec, spec);
      return this.duplicate(known ?? record, 'known already: scheduled, or on its way');
    }
    metrics.count(MetricName.Scheduled, 1, spec.pool);
    const how = arrival.kind === ArrivalKind.Delay ? { delaySeconds: arrival.delaySeconds } : { dueIndex: arrival.bucket };
    log.info('job scheduled', { jobId: spec.id, pool: spec.pool, kind: spec.kind, notBefore: spec.notBefore, ...how });
    return AcquireResult.Scheduled;
  }

  /**
   * Starts a job a release just reserved a slot for, in the releaser's invocation (one hop): the same claim and start a
   * wake-up message would lead to, fenced by the record's version the same way, so a wake-up sent as well (by the
   * reconciler, say) finds the job claimed. `handedOffAt` is when the slot was handed over (for HandOffLatency).
   */
  async startHandedOff(waiter: Pick<Waiter, 'jobId' | 'body'>, handedOffAt: number): Promise<AcquireResult> {
    return this.process({
      messageId: `hand-off:${waiter.jobId}`,
      body: waiter.body,
      reservedHint: true,
      sentAt: handedOffAt,
      oneHop: true,
    });
  }

  /**
   * A take found a limit of the job without room, or missing, or lost its race for a counter (`contended`). Reads
   * which: a missing one is created from configuration (then take again) or the job is rejected; a job heavier than a
   * limit can ever hold is rejected; otherwise the job parks on the list of the limit that holds it back. When every
   * limit has room by now: take again, or, after a lost race, park on the contended limit's list. Undefined when the
   * record moved while parking (read it again).
   */
  private async cannotTake(
    record: JobRecord,
    unsaved: boolean,
    seen: TakeResult['seen'] | undefined,
    delivered: Delivered,
    /** the take was Contended on this gate (it exists, or the counters read now say it does not) */
    contended?: string,
  ): Promise<AcquireResult | typeof TAKE_AGAIN | undefined> {
    const demand = demandOf(record.spec);
    const now = this.deps.clock.now();
    // The failed take's own view of a one-gate demand saves reading the counter again.
    const blocked = seen ? blockedBy([demand.pool], [seen.counter], demand, now) : await blockingGate(this.deps.leases, demand, now);
    // Room everywhere: take again, unless the take lost its race (then wait on the contended limit's list, never on a
    // limit that does not exist: a missing one is created or refused first, below).
    if (!blocked) return contended === undefined ? TAKE_AGAIN : this.park(record, contended, unsaved, true);
    if (blocked.missing) {
      if (await createConfiguredGate(this.deps, blocked.gate)) return TAKE_AGAIN;
      return this.reject(record, unknownGateReason(blocked.gate), unsaved, delivered);
    }
    const units = demandOf(record.spec).units;
    if (blocked.tooHeavy) {
      const where = isKeyGate(blocked.gate) ? `limit '${keyOf(blocked.gate)}'` : `pool '${blocked.gate}'`;
      const reason = new WeightTooLargeError(`weight ${units} is more than the ${blocked.limit} units of ${where}: it could never start`)
        .message;
      return this.reject(record, reason, unsaved, delivered);
    }
    // Waiting for a start rate: one tick per limit lets the waiting jobs in as starts can be booked.
    return this.park(record, blocked.gate, unsaved, blocked.rate);
  }

  private async start(read: JobRecord, mayHaveStartedBefore: boolean, via: StartVia): Promise<AcquireResult> {
    let record = read;
    const { spec } = record;
    const { ledger, clock, log, metrics } = this.deps;
    // A limit's start rate booked this start for a time at most the horizon ahead: not before it, and not on a booking
    // long past (a late wake-up): starts follow booked times within the slack, so a late one books again.
    if (record.startAt !== undefined && bookingIsStale(record.startAt, clock.now())) {
      const booking = await this.deps.leases.book(demandOf(spec), clock.now()).catch((error: unknown) => {
        // Other bookings kept winning the race for the rate: keep the slot, and book again a moment later.
        if (error instanceof ContentionError) return { retryAt: clock.now() + CONTENDED_BOOKING_RETRY_MS };
        throw error;
      });
      if ('retryAt' in booking) return this.waitForRate(record, booking.retryAt);
      record = { ...record, startAt: booking.startAt };
    }
    if (record.startAt !== undefined && record.startAt > clock.now()) await clock.sleepUntil(record.startAt);
    let executionId: string;
    try {
      ({ executionId } = await this.deps.starters[spec.kind].start(spec, {
        mayHaveStarted: mayHaveStartedBefore,
        requestedSince: record.firstStartAt,
        ...(record.replacesRun !== undefined && { replacesRun: record.replacesRun }),
      }));
    } catch (error) {
      if (error instanceof TransientStartError || error instanceof PermanentStartError)
        return this.failed(record, error, mayHaveStartedBefore, via.oneHop);
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
    if (!moved) await this.recordLate(spec.id, executionId, now);
    log.info('job started', { ...keys, recorded: moved });
    metrics.count(MetricName.Starts, 1, spec.pool);
    if (via.handOffSentAt !== undefined) metrics.milliseconds(MetricName.HandOffLatency, Math.max(0, now - via.handOffSentAt), spec.pool);
    // The run's completion event came before the run was recorded: finish it now, as the event would have.
    if (early) await this.completeRun.complete(early);
    return AcquireResult.Started;
  }

  /**
   * A start whose booking went stale finds its rate with no start to give within the horizon: the job keeps its slot
   * and its message comes back when a start can be booked (protocol step rateWait); that delivery resumes the start.
   */
  private async waitForRate(record: JobRecord, retryAt: number): Promise<AcquireResult> {
    const { spec } = record;
    const now = this.deps.clock.now();
    const move = { jobId: spec.id, version: record.version, to: PROTOCOL.rateWait.to, patch: { claimableAt: retryAt } };
    if (!(await this.deps.ledger.move(move, now))) return this.duplicate(record, 'moved on while it waited for its start rate');
    await this.deps.queue.send(encodeJobBody(spec), delaySecondsUntil(retryAt, now));
    this.deps.log.info("start waits for its limit's start rate", { jobId: spec.id, pool: spec.pool, kind: spec.kind, retryAt });
    return AcquireResult.RetryScheduled;
  }

  /**
   * The record moved on while the start call was made: its completion came first (then nothing is left to do), or the
   * job was given up keeping its slot for a run of unknown outcome: that run is this one, so its id is recorded and its
   * end gives the slot back (protocol step foundRun).
   */
  private async recordLate(jobId: string, executionId: string, now: number): Promise<void> {
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const record = await this.deps.ledger.get(jobId);
      if (!record || record.state !== JobState.Dead || !record.lease || record.executionId) return;
      const move = { jobId, version: record.version, to: PROTOCOL.foundRun.to, patch: { executionId, startedAt: now } };
      if (await this.deps.ledger.move(move, now)) return;
    }
  }

  /**
   * Parks the job on the waiting list of `gate` (the limit with no room for it); undefined if its record moved meanwhile
   * (decide again). A job with a fairness key gets its round first, kept on its record for when it waits again.
   */
  private async park(record: JobRecord, gate: string, unsaved: boolean, tick = false): Promise<AcquireResult | undefined> {
    const { leases, ledger, clock, metrics, log } = this.deps;
    const { spec } = record;
    const waitRank = record.waitRank ?? (spec.fairnessKey === undefined ? undefined : await leases.fairRank(spec.pool, spec.fairnessKey));
    const parked = { ...record, waitRank };
    const move = { jobId: spec.id, version: record.version, to: PROTOCOL.park.to, patch: { waitRank } };
    if (unsaved) {
      // A first delivery: the record is created waiting, with its waiter item, in one transaction.
      if (!(await leases.addWaiter(waiterFor(parked, gate), moved(parked, move, clock.now())))) return undefined;
    } else {
      // The waiter first: a job in `waiting` always has one, so a hand-off can find it.
      await leases.addWaiter(waiterFor(parked, gate));
      if (!(await ledger.move(move, clock.now()))) return undefined;
    }
    await this.afterParking(record, gate, tick);
    metrics.count(MetricName.Parked, 1, spec.pool);
    log.debug('limit full, job waits', { jobId: spec.id, pool: spec.pool, kind: spec.kind, waitsOn: gate });
    return AcquireResult.Waiting;
  }

  /**
   * After a job parked (registered for good: its message may be deleted whatever happens next): units freed between
   * the failed take and parking would have found no waiter, so the limit is looked at once more and filled; `tick`: a
   * rated limit's tick is made sure of. Neither is needed for the job to run eventually (a release, the reconciler's
   * fill and its tick do that), so a failure here (contention on a hot counter that outlasted its tries) is logged, not
   * thrown: the delivery is done.
   */
  private async afterParking(record: JobRecord, gate: string, tick: boolean): Promise<void> {
    try {
      const counter = await this.deps.leases.getPool(gate);
      if (counter && counter.inUse < counter.limit) {
        this.fullHints.forget(gate);
        await this.handOff.fill(gate);
      }
      if (tick) await ensureTick(this.deps, gate);
    } catch (error) {
      this.deps.log.warn('job parked; letting jobs in right after failed (a release or the reconciler will)', {
        jobId: record.jobId,
        pool: record.pool,
        kind: record.kind,
        waitsOn: gate,
        error: String(error),
      });
    }
  }

  /**
   * The job can never run (an unknown pool or limit, a weight no limit can hold): dead-lettered with the reason, its DLQ
   * copy the body that was delivered, byte for byte (the sender's own, on arrival).
   */
  private async reject(record: JobRecord, reason: string, unsaved: boolean, delivered: Delivered): Promise<AcquireResult | undefined> {
    // A first delivery is registered first (rare: an unknown pool or key, a weight no limit holds); a job registered
    // meanwhile by another delivery is read again.
    if (unsaved && !(await this.deps.ledger.register(record.spec, record.firstSeenAt)).created) return undefined;
    const move = { jobId: record.jobId, version: record.version, to: PROTOCOL.reject.to, patch: { lastError: reason } };
    // Moved meanwhile: read it again (undefined). Not a duplicate to drop: the mover may be another copy of this message
    // that rejected it and died before its DLQ send, and then this delivery is the one that must send it (explorer,
    // seed 32 with flow control: two copies, a lost answer).
    if (!(await this.deps.ledger.move(move, this.deps.clock.now()))) return undefined;
    return this.sendToDlq({ ...record, state: JobState.Dead, version: record.version + 1 }, reason, delivered);
  }

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
  private async sendToDlq(record: JobRecord, reason: string, delivered?: Delivered): Promise<AcquireResult> {
    const { spec } = record;
    const context = { jobId: spec.id, pool: spec.pool, ...(delivered && { messageId: delivered.messageId }) };
    const result = await this.deadLetter(delivered?.body ?? encodeJobBody(spec), reason, context, spec.kind);
    const noted = {
      jobId: spec.id,
      version: record.version,
      to: PROTOCOL.deadLettered.to,
      patch: { deadLetteredAt: this.deps.clock.now() },
    };
    await this.deps.ledger.move(noted, this.deps.clock.now());
    await jobEnded(this.deps, { ...record, state: JobState.Dead, lastError: reason, endedAt: record.endedAt ?? this.deps.clock.now() });
    return result;
  }

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
  private async failed(
    read: JobRecord,
    error: TransientStartError | PermanentStartError,
    mayHaveStartedBefore: boolean,
    oneHop: boolean,
  ): Promise<AcquireResult> {
    let record = read;
    const { spec } = record;
    const { settings, clock, log, metrics } = this.deps;
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
    const delay = retryDelaySeconds(attempts, settings.backoff, this.deps.random);
    // Hold and handBack: the retry message resumes the start when it arrives (claimableAt), looking for a run first if
    // one may exist.
    const retryDue = now + Math.max(0, delay - 1) * 1000;
    let retrySent = false;
    if (oneHop) {
      const handBack = move({ claimableAt: retryDue }, PROTOCOL.handBack.to);
      if (!(await this.deps.ledger.move(handBack, now)) && !(await this.wroteItself(record, handBack)))
        return this.duplicate(record, 'moved on while its start failed');
      record = moved(record, handBack, now);
      await this.deps.queue.send(encodeJobBody(spec), delay);
      retrySent = true;
    }
    switch (step) {
      case 'backoff':
      case 'hold': {
        const retry = step === 'backoff' ? move({}) : move({ claimableAt: retryDue });
        const applied =
          step === 'backoff' ? await this.handOff.release(demandOf(spec), retry) : retrySent || (await this.deps.ledger.move(retry, now));
        if (!applied && !(await this.wroteItself(record, retry))) return this.duplicate(record, 'moved on while its start failed');
        if (!retrySent) await this.deps.queue.send(encodeJobBody(spec), delay);
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
          if (!(await this.handOff.release(demandOf(spec), giveUp)) && !(await this.wroteItself(record, giveUp)))
            return this.duplicate(record, 'moved on while its start failed');
          return this.sendToDlq({ ...record, state: JobState.Dead, version: record.version + 1 }, reason);
        }
        return this.giveUpKeep(record, move, reason);
      }
    }
  }

  /**
   * A job given up while a run it may have started could still be going keeps its slot (protocol step giveUpKeep) until
   * `leaseUntil`: the longest that run may go, its own deadline when it has one (a callback job's timeout), else its
   * kind's maximum run time. A kind that knows the run's id before the start (a callback job's token) has that run
   * recorded with the step, and its run reference written after the DLQ send, so the run's own report (a completion of
   * that run id) gives the slot back at once (giveBack). A crash before the reference leaves the slot to leaseUntil.
   */
  private async giveUpKeep(record: JobRecord, move: (patch: RecordPatch) => Move, reason: string): Promise<AcquireResult> {
    const { spec } = record;
    const { ledger, clock, settings, log } = this.deps;
    const runId = await this.runIdBeforeStart(spec);
    const now = clock.now();
    // Its heartbeats are not recorded once it is dead (the heartbeat step needs a running job): only its timeout bounds it.
    const deadline = kindOf(spec.kind).runDeadline?.(spec, { startedAt: now, heartbeatAt: Number.POSITIVE_INFINITY });
    const leaseUntil = keptSlotUntil(now, settings.maxRunMs[spec.kind], deadline);
    const run = runId === undefined ? {} : { executionId: runId, startedAt: now };
    const keep = move({ lastError: reason, leaseUntil, ...run });
    if (!(await ledger.move(keep, now)) && !(await this.wroteItself(record, keep)))
      return this.duplicate(record, 'moved on while its start failed');
    log.warn('job given up; its slot is kept while a run it may have started could still be going', {
      jobId: spec.id,
      pool: spec.pool,
      kind: spec.kind,
      leaseUntil,
      ...(runId !== undefined && { executionId: runId }),
    });
    const result = await this.sendToDlq({ ...record, state: JobState.Dead, version: record.version + 1 }, reason);
    if (runId !== undefined) {
      // Its report may have come already (noted on the run's key): it gives the slot back now, as it would have.
      const early = await ledger.recordRun({ kind: spec.kind, executionId: runId, jobId: spec.id, pool: spec.pool }, clock.now());
      if (early) await this.completeRun.complete(early);
    }
    return result;
  }

  /**
   * A fenced move that failed may have been this attempt's own: applied, its answer lost, and the SDK's retry of it
   * meeting its effect ("condition failed"; docs/protocol.md, "Answers lost after a write applied"). True if the record
   * now shows exactly that move: one version on, in its target state, with the attempts it wrote, still owned by this
   * attempt (no other writer moves a starting job it does not own to queued, starting or dead).
   */
  private async wroteItself(read: JobRecord, move: Move): Promise<boolean> {
    const now = await this.deps.ledger.get(read.jobId);
    return (
      now !== undefined &&
      now.version === move.version + 1 &&
      now.state === move.to &&
      now.attempt === read.attempt &&
      now.attempts === move.patch?.attempts
    );
  }

  /** The run id a start of this job returns, for a kind that knows it beforehand (JobStarter.runIdOf); undefined if not. */
  private async runIdBeforeStart(spec: JobSpec): Promise<string | undefined> {
    const starter = this.deps.starters[spec.kind];
    if (!starter.runIdOf) return undefined;
    try {
      return await starter.runIdOf(spec);
    } catch (error) {
      // (A callback job's token secret unreadable.) The slot is then kept until leaseUntil, as for a run id unknown.
      this.deps.log.warn('run id of a job given up could not be made: its slot is kept until leaseUntil', {
        jobId: spec.id,
        pool: spec.pool,
        kind: spec.kind,
        error: String(error),
      });
      return undefined;
    }
  }

  /** `context` goes with the DLQ copy as attributes; `kind`, when known, only to the log. */
  private async deadLetter(body: string, reason: string, context: Record<string, string>, kind?: string): Promise<AcquireResult> {
    await this.deps.queue.deadLetter(body, reason, context);
    this.deps.metrics.count(MetricName.DeadLettered, 1, context.pool);
    this.deps.log.error('job dead-lettered', { ...context, kind, reason });
    return AcquireResult.DeadLettered;
  }

  /** An idempotency key names one job: a different job under a known id is refused, never run as the stored one. */
  private otherJobUnderId(message: InboundMessage, stored: JobSpec, received: JobSpec): Promise<AcquireResult> {
    const reason = `job id '${received.id}' was already used for a different job (${describeDifference(stored, received)})`;
    return this.deadLetter(message.body, reason, { jobId: received.id, pool: received.pool, messageId: message.messageId }, received.kind);
  }

  private duplicate(record: JobRecord, why: string): AcquireResult {
    this.deps.metrics.count(MetricName.Duplicates, 1, record.pool);
    this.deps.log.info('duplicate delivery ignored', {
      jobId: record.jobId,
      pool: record.pool,
      kind: record.kind,
      executionId: record.executionId,
      state: record.state,
      why,
    });
    return AcquireResult.Duplicate;
  }
}

/** Why a job naming a gate that neither exists nor is configured can never run. */
function unknownGateReason(gate: string): string {
  if (!isKeyGate(gate)) return new UnknownPoolError(`unknown pool '${gate}': configure it or set its limit first`).message;
  const key = keyOf(gate);
  return new UnknownLimitError(
    `unknown limit '${key}': set it with \`sluice limit set ${key} N\` or configure a default for the prefix '${key.split(':')[0]}' (KEY_LIMITS)`,
  ).message;
}

/** Names the fields two specs disagree on, for the dead-letter reason. */
function describeDifference(stored: JobSpec, received: JobSpec): string {
  const a = stored as unknown as Record<string, unknown>;
  const b = received as unknown as Record<string, unknown>;
  const fields = [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((k) => canonicalJson(a[k]) !== canonicalJson(b[k]));
  return `differs in ${fields.join(', ') || 'field order'}`;
}
