import { isTerminal, JobState, keepsSlotForUnknownRun, STARTABLE_STATES } from '../domain/jobState';
import type { JobSpec } from '../domain/job';
import { hasAttemptsLeft, retryDelaySeconds } from '../domain/backoff';
import { isHeldBy, isValidLimit } from '../domain/pool';
import { waitKey } from '../domain/waiting';
import { InvalidJobError, PermanentStartError, TransientStartError, UnknownPoolError } from '../errors';
import type { JobRecord } from '../ports/jobLedger';
import { AcquireOutcome } from '../ports/leaseStore';
import { MetricName, type SluiceDeps } from './deps';
import { CompleteRun } from './completeRun';
import { HandOff } from './handOff';
import { parseJob } from './parseJob';

export const AcquireResult = {
  Started: 'started',
  Waiting: 'waiting',
  Duplicate: 'duplicate',
  RetryScheduled: 'retry-scheduled',
  DeadLettered: 'dead-lettered',
} as const;
export type AcquireResult = (typeof AcquireResult)[keyof typeof AcquireResult];

export interface InboundMessage {
  messageId: string;
  body: string;
  /** The sender says a slot is reserved for this job (a hand-off). Only changes which calls come first. */
  reservedHint?: boolean;
  /** When the message was sent (epoch ms, SQS SentTimestamp): a reserved job's start reports its hand-off latency. */
  sentAt?: number;
}

/**
 * The acquirer: one job message in, one decision out. Takes a slot (or finds the one reserved for this job) and
 * starts the run; parks the job when its pool is full; dead-letters what can never run. Every path ends with the
 * message safe to delete: the job is running, parked in the table, sent again, or in the DLQ.
 */
export class Acquirer {
  private readonly handOff: HandOff;
  private readonly completeRun: CompleteRun;

  constructor(private readonly deps: SluiceDeps) {
    this.handOff = new HandOff(deps);
    this.completeRun = new CompleteRun(deps);
  }

  async process(message: InboundMessage): Promise<AcquireResult> {
    let spec: JobSpec;
    try {
      spec = parseJob(message.body, message.messageId);
    } catch (error) {
      if (error instanceof InvalidJobError) return this.deadLetter(message.body, error.message, { messageId: message.messageId });
      throw error;
    }
    const now = this.deps.clock.now();
    // A job let in by a hand-off is in the ledger already: read it instead of a create that would fail, and read its
    // pool at the same time to confirm the reservation (one round trip instead of two on the hand-off path).
    const reservation = message.reservedHint ? this.holdsSlot(spec) : undefined;
    reservation?.catch(() => undefined); // awaited below unless the job turns out finished or running
    const known = message.reservedHint ? await this.deps.ledger.get(spec.id) : undefined;
    const { record, created } = known ? { record: known, created: false } : await this.deps.ledger.register(spec, now);
    if (!created && canonical(record.spec) !== canonical(spec)) {
      // An idempotency key names one job: a different job under a known id is refused, never run as the stored one.
      const reason = `job id '${spec.id}' was already used for a different job (${describeDifference(record.spec, spec)})`;
      return this.deadLetter(message.body, reason, { jobId: spec.id, pool: spec.pool }, spec.kind);
    }
    if (record.state === JobState.Running) return this.duplicate(record, 'running');
    if (isTerminal(record.state)) {
      // A slot reserved for a finished job (a stale waiter let in) is given back at once; usually this is a no-op.
      if (!keepsSlotForUnknownRun(record, now, this.deps.settings.maxRunMs[record.kind])) {
        await this.handOff.releaseAndHandOff(record.pool, record.jobId);
      }
      return this.duplicate(record, 'already finished');
    }
    if (record.state === JobState.Starting) return this.resume(record);

    let outcome =
      reservation && (await reservation)
        ? AcquireOutcome.AlreadyHeld
        : await this.deps.leases.acquire(spec.pool, spec.id, { kind: spec.kind, since: now });
    if (outcome === AcquireOutcome.NoPool) {
      if (!(await this.createConfiguredPool(spec.pool))) {
        const reason = new UnknownPoolError(`unknown pool '${spec.pool}': configure it or set its limit first`).message;
        // The DLQ first: a crash before the ledger write sends a second copy at worst, never none.
        const result = await this.deadLetter(message.body, reason, { jobId: spec.id, pool: spec.pool }, spec.kind);
        await this.deps.ledger.transition(spec.id, STARTABLE_STATES, JobState.Dead, now, { lastError: reason });
        return result;
      }
      outcome = await this.deps.leases.acquire(spec.pool, spec.id, { kind: spec.kind, since: now });
    }
    if (outcome === AcquireOutcome.Full) return this.park(record);
    if (outcome === AcquireOutcome.NoPool) throw new Error(`pool ${spec.pool} vanished while acquiring`);

    // Once a start was asked for, a run may exist whatever the answer was: every later start looks for it first.
    if (!(await this.deps.ledger.transition(spec.id, STARTABLE_STATES, JobState.Starting, now, { startRequested: true }))) {
      const current = await this.deps.ledger.get(spec.id);
      // A slot reserved for a job that has ended meanwhile must not be kept.
      if (current && isTerminal(current.state)) await this.handOff.releaseAndHandOff(spec.pool, spec.id);
      return this.duplicate(current ?? record, 'another delivery is starting it');
    }
    return this.start(
      { ...record, state: JobState.Starting },
      record.startRequested === true,
      message.reservedHint ? message.sentAt : undefined,
    );
  }

  private async start(record: JobRecord, mayHaveStarted: boolean, handOffSentAt?: number): Promise<AcquireResult> {
    const { spec } = record;
    const { ledger, clock, log, metrics } = this.deps;
    let executionId: string;
    try {
      ({ executionId } = await this.deps.starters[spec.kind].start(spec, { mayHaveStarted }));
    } catch (error) {
      if (error instanceof TransientStartError) return this.retryLater(record, error, mayHaveStarted);
      if (error instanceof PermanentStartError) return this.giveUp(record, error.message, mayHaveStarted);
      throw error;
    }
    const now = clock.now();
    // Independent writes: the run's way back to the job, and the job's move to running.
    const [early, moved] = await Promise.all([
      ledger.recordRun({ kind: spec.kind, executionId, jobId: spec.id, pool: spec.pool }, now),
      ledger.transition(spec.id, [JobState.Starting], JobState.Running, now, {
        executionId,
        startedAt: now,
        attempts: record.attempts + 1,
      }),
    ]);
    log.info('job started', { jobId: spec.id, pool: spec.pool, kind: spec.kind, executionId, recorded: moved });
    metrics.count(MetricName.Starts, 1, spec.pool);
    if (handOffSentAt !== undefined) metrics.milliseconds(MetricName.HandOffLatency, Math.max(0, now - handOffSentAt), spec.pool);
    // The run's completion event came before the run was recorded: finish it now, as the event would have.
    if (early) await this.completeRun.complete(early);
    return AcquireResult.Started;
  }

  /** A job left in `starting`: a concurrent delivery is starting it, or an acquirer died mid-start. */
  private async resume(record: JobRecord): Promise<AcquireResult> {
    const now = this.deps.clock.now();
    if (now - record.updatedAt < this.deps.settings.startGraceMs) return this.duplicate(record, 'being started now');
    if (!(await this.deps.ledger.claimStart(record.jobId, record.updatedAt, now))) return this.duplicate(record, 'resumed by another');
    this.deps.log.warn('resuming a job whose start was interrupted', { jobId: record.jobId, pool: record.pool, kind: record.kind });
    // Make sure it still holds its slot (the reconciler may have freed it); resuming without one could over-admit.
    const outcome = await this.deps.leases.acquire(record.pool, record.jobId, { kind: record.kind, since: now });
    if (outcome === AcquireOutcome.Full) {
      await this.deps.ledger.transition(record.jobId, [JobState.Starting], JobState.Queued, now);
      return this.park({ ...record, state: JobState.Queued });
    }
    return this.start(record, true);
  }

  private async park(record: JobRecord): Promise<AcquireResult> {
    const { leases, ledger, clock, metrics, log } = this.deps;
    const { spec } = record;
    await leases.addWaiter({
      pool: spec.pool,
      jobId: spec.id,
      kind: spec.kind,
      waitKey: waitKey(record.firstSeenAt, spec.id),
      body: JSON.stringify(spec),
      since: record.firstSeenAt,
    });
    await ledger.transition(spec.id, [JobState.Queued], JobState.Waiting, clock.now());
    // A slot freed between the failed acquire and parking would have found no waiter: look once more.
    const pool = await leases.getPool(spec.pool);
    if (pool && pool.inUse < pool.limit) await this.handOff.fill(spec.pool);
    metrics.count(MetricName.Parked, 1, spec.pool);
    log.debug('pool full, job waits', { jobId: spec.id, pool: spec.pool, kind: spec.kind });
    return AcquireResult.Waiting;
  }

  /**
   * A start failed in a way that may pass. The slot is freed for the backoff, unless an earlier attempt may have
   * started a run: then the slot stays with the job (freeing it could run one job more than the limit) and the retry
   * looks for that run before starting another.
   */
  private async retryLater(record: JobRecord, error: TransientStartError, mayHaveStartedBefore: boolean): Promise<AcquireResult> {
    const { spec } = record;
    const attempts = record.attempts + 1;
    const { backoff } = this.deps.settings;
    // A refusal started nothing: what was known before this call still holds. No answer at all may have started a run.
    const mayHaveStarted = mayHaveStartedBefore || !error.definite;
    if (!hasAttemptsLeft(attempts, backoff))
      return this.giveUp(record, `gave up after ${attempts} attempts: ${error.message}`, mayHaveStarted);
    const delay = retryDelaySeconds(attempts, backoff, this.deps.random);
    await this.deps.ledger.transition(spec.id, [JobState.Starting], JobState.Queued, this.deps.clock.now(), {
      attempts,
      lastError: error.message,
      startRequested: mayHaveStarted,
    });
    // Send the retry before freeing the slot: a crash in between leaves a slot the retry finds, never a lost job.
    await this.deps.queue.send(JSON.stringify(spec), delay);
    if (!mayHaveStarted) await this.handOff.releaseAndHandOff(spec.pool, spec.id);
    this.deps.metrics.count(MetricName.Retries, 1, spec.pool);
    this.deps.log.warn('start failed, will retry', {
      jobId: spec.id,
      pool: spec.pool,
      kind: spec.kind,
      attempts,
      delaySeconds: delay,
      error: error.message,
    });
    return AcquireResult.RetryScheduled;
  }

  /**
   * The job can never run: dead-lettered with the reason, marked dead, its slot freed. If an earlier attempt may have
   * started a run that nobody recorded, the slot stays held: the reconciler frees it once that run must have ended
   * (the kind's maximum run time), so the pool never runs more than its limit.
   */
  private async giveUp(record: JobRecord, reason: string, mayHaveStarted: boolean): Promise<AcquireResult> {
    const { spec } = record;
    // The DLQ first: a crash before the ledger write sends a second copy at worst, never none.
    await this.deadLetter(JSON.stringify(spec), reason, { jobId: spec.id, pool: spec.pool }, spec.kind);
    await this.deps.ledger.transition(spec.id, [JobState.Starting], JobState.Dead, this.deps.clock.now(), {
      lastError: reason,
      startRequested: mayHaveStarted,
    });
    if (mayHaveStarted)
      this.deps.log.warn('job given up; its slot is kept while a run it may have started could still be going', {
        jobId: spec.id,
        pool: spec.pool,
        kind: spec.kind,
      });
    else await this.handOff.releaseAndHandOff(spec.pool, spec.id);
    return AcquireResult.DeadLettered;
  }

  /** `context` goes with the DLQ copy as attributes; `kind`, when known, only to the log. */
  private async deadLetter(body: string, reason: string, context: Record<string, string>, kind?: string): Promise<AcquireResult> {
    await this.deps.queue.deadLetter(body, reason, context);
    this.deps.metrics.count(MetricName.DeadLettered, 1, context.pool);
    this.deps.log.error('job dead-lettered', { ...context, kind, reason });
    return AcquireResult.DeadLettered;
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

  /** The pool item, not the message, says whether a slot is held: the hint is only a shortcut. */
  private async holdsSlot(spec: JobSpec): Promise<boolean> {
    const pool = await this.deps.leases.getPool(spec.pool);
    return pool !== undefined && isHeldBy(pool, spec.id);
  }

  private async createConfiguredPool(pool: string): Promise<boolean> {
    const limit = this.deps.settings.pools[pool];
    if (limit === undefined || !isValidLimit(limit)) return false;
    await this.deps.leases.createPool(pool, limit);
    return true;
  }
}

/** JSON with keys sorted at every level, so two equal specs compare equal whatever their key order. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b))) : v,
  );
}

/** Names the fields two specs disagree on, for the dead-letter reason. */
function describeDifference(stored: JobSpec, received: JobSpec): string {
  const a = stored as unknown as Record<string, unknown>;
  const b = received as unknown as Record<string, unknown>;
  const fields = [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((k) => canonical(a[k]) !== canonical(b[k]));
  return `differs in ${fields.join(', ') || 'field order'}`;
}
