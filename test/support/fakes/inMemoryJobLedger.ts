import type { JobKind, JobSpec, RunCompletion } from '../../../shared/domain/job';
import { isTerminal, JobState } from '../../../shared/domain/jobState';
import type { JobLedger, JobRecord, RunRef, TransitionPatch } from '../../../shared/ports/jobLedger';
import { tick } from './tick';

interface StoredJob {
  record: JobRecord;
  /** epoch seconds, set on reaching a terminal state (DynamoDB TTL attribute) */
  expiresAt?: number;
}

interface StoredRun {
  ref: RunRef;
  recordedAt: number;
  expiresAt: number;
}

export interface InMemoryLedgerOptions {
  retentionDays: number;
}

/**
 * JobLedger in memory with the semantics of DynamoJobLedger (shared/adapters/dynamodb/jobLedger.ts):
 * - register is a Put if not exists; a known job returns the stored record (created=false) and changes nothing;
 * - transition: `state IN from` AND (when expectExecutionId is given) the record has no executionId or that one;
 *   sets state, updatedAt = now, every defined patch field, and expiresAt when `to` is terminal; an unknown job -> false;
 *   an empty `from` is rejected the way DynamoDB rejects `#state IN ()` (it throws);
 * - claimStart: state is `starting` AND updatedAt = seenUpdatedAt -> updatedAt = max(now, seenUpdatedAt + 1);
 * - recordRun is an unconditional write (a second record of one run overwrites) that returns and clears the early
 *   completion noted for the run; findRun is keyed by (kind, executionId) and sees recorded runs only;
 * - noteEarlyCompletion writes only while the run is not recorded (a later note replaces an earlier one).
 * Records are copied in and out, so a caller never shares an object with the store.
 */
export class InMemoryJobLedger implements JobLedger {
  private readonly jobs = new Map<string, StoredJob>();
  private readonly runs = new Map<string, StoredRun>();
  private readonly early = new Map<string, RunCompletion>();
  calls = 0;

  constructor(private readonly options: InMemoryLedgerOptions = { retentionDays: 30 }) {}

  async register(spec: JobSpec, now: number): Promise<{ created: boolean; record: JobRecord }> {
    await this.enter();
    const existing = this.jobs.get(spec.id);
    if (existing) return { created: false, record: structuredClone(existing.record) };
    const record: JobRecord = {
      jobId: spec.id,
      pool: spec.pool,
      kind: spec.kind,
      state: JobState.Queued,
      spec: structuredClone(spec),
      attempts: 0,
      firstSeenAt: now,
      updatedAt: now,
    };
    this.jobs.set(spec.id, { record });
    return { created: true, record: structuredClone(record) };
  }

  async get(jobId: string): Promise<JobRecord | undefined> {
    await this.enter();
    const stored = this.jobs.get(jobId);
    return stored ? structuredClone(stored.record) : undefined;
  }

  async transition(
    jobId: string,
    from: readonly JobState[],
    to: JobState,
    now: number,
    patch: TransitionPatch = {},
    expectExecutionId?: string,
  ): Promise<boolean> {
    await this.enter();
    if (from.length === 0) throw new Error('ValidationException: Invalid ConditionExpression: #state IN () has no values');
    const stored = this.jobs.get(jobId);
    if (!stored || !from.includes(stored.record.state)) return false;
    if (expectExecutionId !== undefined && stored.record.executionId !== undefined && stored.record.executionId !== expectExecutionId) {
      return false;
    }
    const record = stored.record as unknown as Record<string, unknown>;
    record.state = to;
    record.updatedAt = now;
    for (const [field, value] of Object.entries(patch)) {
      if (value !== undefined) record[field] = value;
    }
    if (isTerminal(to)) stored.expiresAt = Math.floor(now / 1000) + this.options.retentionDays * 86_400;
    return true;
  }

  async claimStart(jobId: string, seenUpdatedAt: number, now: number): Promise<boolean> {
    await this.enter();
    const stored = this.jobs.get(jobId);
    if (!stored || stored.record.state !== JobState.Starting || stored.record.updatedAt !== seenUpdatedAt) return false;
    stored.record.updatedAt = Math.max(now, seenUpdatedAt + 1);
    return true;
  }

  async recordRun(ref: RunRef, now: number): Promise<RunCompletion | undefined> {
    await this.enter();
    const key = runKey(ref.kind, ref.executionId);
    const early = this.early.get(key);
    this.early.delete(key);
    this.runs.set(key, {
      ref: { kind: ref.kind, executionId: ref.executionId, jobId: ref.jobId, pool: ref.pool },
      recordedAt: now,
      expiresAt: Math.floor(now / 1000) + this.options.retentionDays * 86_400,
    });
    return early && { ...early };
  }

  async findRun(kind: JobKind, executionId: string): Promise<RunRef | undefined> {
    await this.enter();
    const run = this.runs.get(runKey(kind, executionId));
    return run ? { ...run.ref } : undefined;
  }

  async noteEarlyCompletion(completion: RunCompletion, _now: number): Promise<boolean> {
    await this.enter();
    const key = runKey(completion.kind, completion.executionId);
    if (this.runs.has(key)) return false;
    this.early.set(key, { ...completion });
    return true;
  }

  /** Test helper (not a port call): the TTL attribute the record would carry in DynamoDB. */
  expiresAtOf(jobId: string): number | undefined {
    return this.jobs.get(jobId)?.expiresAt;
  }

  /** Test helper (not a port call): every record, in registration order. */
  all(): JobRecord[] {
    return [...this.jobs.values()].map((stored) => structuredClone(stored.record));
  }

  /** Test helper (not a port call): a copy of one record. */
  peek(jobId: string): JobRecord | undefined {
    const stored = this.jobs.get(jobId);
    return stored ? structuredClone(stored.record) : undefined;
  }

  private async enter(): Promise<void> {
    this.calls++;
    await tick();
  }
}

const runKey = (kind: string, executionId: string) => `${kind}#${executionId}`;
