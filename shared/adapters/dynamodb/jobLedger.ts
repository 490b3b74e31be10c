import { DeleteCommand, type DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { RunCompletion } from '../../domain/job';
import { isTerminal, JobState } from '../../domain/jobState';
import { type JobLedger, type JobRecord, type Move, registeredRecord, type RunRef } from '../../ports/jobLedger';
import { DEAD_NEVER_STARTED, IS_NEW, RUN_NOT_RECORDED, RUNNING_THIS_RUN, SAME_VERSION_FREE, SAME_VERSION_LEASED } from './conditions';
import { type Backoff, contentionRetrying, type Send } from './contention';
import { applied } from './errors';
import { expiresAfter, fromJobItem, moveUpdate, SECONDS_PER_DAY, toJobItem, type UpdateParts } from './jobItem';
import { jobKey, runKey } from './keys';
import type { JobKind, JobSpec } from '../../kinds/registry';

/** An early completion waits this long for its run to be recorded; most are for runs Sluice never started. */
const EARLY_COMPLETION_TTL_SECONDS = SECONDS_PER_DAY;

export interface LedgerOptions {
  /** How to wait between tries that met contention (real timers and jitter by default). */
  backoff?: Backoff;
  /** How long finished jobs and run references stay before DynamoDB TTL removes them. */
  retentionDays: number;
}

export class DynamoJobLedger implements JobLedger {
  /** Every request goes through it: contention (a transaction on the item) is tried again with backoff. */
  private readonly send: Send;

  constructor(
    doc: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly options: LedgerOptions = { retentionDays: 30 },
  ) {
    this.send = contentionRetrying(doc, options.backoff);
  }

  async register(spec: JobSpec, now: number): Promise<{ created: boolean; record: JobRecord }> {
    const record = registeredRecord(spec, now);
    const put = new PutCommand({ TableName: this.tableName, Item: toJobItem(record), ConditionExpression: IS_NEW });
    if (await applied(this.send(put))) return { created: true, record };
    const existing = await this.get(spec.id);
    if (!existing) throw new Error(`job ${spec.id} exists and vanished at once`);
    return { created: false, record: existing };
  }

  async get(jobId: string): Promise<JobRecord | undefined> {
    const { Item } = await this.send(new GetCommand({ TableName: this.tableName, Key: jobKey(jobId), ConsistentRead: true }));
    return Item ? fromJobItem(Item) : undefined;
  }

  async move(move: Move, now: number): Promise<boolean> {
    const write = (update: UpdateParts) =>
      applied(this.send(new UpdateCommand({ TableName: this.tableName, Key: jobKey(move.jobId), ...update })));
    const retention = this.options.retentionDays;
    if (!isTerminal(move.to)) return write(moveUpdate(move, now, 'keep', retention));
    // A finished job gets its TTL only once it holds no slot. A slot kept for a run of unknown outcome (giveUpKeep,
    // foundRun) exists on this record alone: TTL deleting the record would leave the pool's count up for good. The
    // free that gives the slot back sets the TTL. One write whose condition says which case it is, a second for the other.
    if (await write(moveUpdate(move, now, 'keep', retention, SAME_VERSION_FREE))) return true;
    return write(moveUpdate(move, now, 'keep', retention, SAME_VERSION_LEASED, false));
  }

  async forget(jobId: string, version: number): Promise<boolean> {
    return applied(
      this.send(
        new DeleteCommand({
          TableName: this.tableName,
          Key: jobKey(jobId),
          ConditionExpression: DEAD_NEVER_STARTED,
          ExpressionAttributeNames: { '#version': 'version', '#state': 'state' },
          ExpressionAttributeValues: { ':version': version, ':dead': JobState.Dead, ':false': false },
        }),
      ),
    );
  }

  async recordRun(ref: RunRef, now: number): Promise<RunCompletion | undefined> {
    // One write that also hands back a completion noted before the run was recorded. Kept, not cleared: a retry of
    // this write after its answer was lost, or the next attempt after this invocation died before completing the run,
    // gets it again (completing a run twice is a duplicate event: harmless).
    const { Attributes } = await this.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: runKey(ref.kind, ref.executionId),
        UpdateExpression:
          'SET #kind = :kind, executionId = :executionId, jobId = :jobId, #pool = :pool, recordedAt = :now, expiresAt = :expiresAt',
        ExpressionAttributeNames: { '#kind': 'kind', '#pool': 'pool' },
        ExpressionAttributeValues: {
          ':kind': ref.kind,
          ':executionId': ref.executionId,
          ':jobId': ref.jobId,
          ':pool': ref.pool,
          ':now': now,
          ':expiresAt': expiresAfter(now, this.options.retentionDays * SECONDS_PER_DAY),
        },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return Attributes?.earlyCompletion as RunCompletion | undefined;
  }

  async noteEarlyCompletion(completion: RunCompletion, now: number): Promise<boolean> {
    return applied(
      this.send(
        new PutCommand({
          TableName: this.tableName,
          Item: { ...runKey(completion.kind, completion.executionId), ...noteOf(completion, now) },
          ConditionExpression: RUN_NOT_RECORDED,
        }),
      ),
    );
  }

  async keepCompletion(completion: RunCompletion, now: number): Promise<void> {
    const note = noteOf(completion, now);
    await this.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: runKey(completion.kind, completion.executionId),
        // The first completion kept wins, as the first applied would; a recorded run keeps its own expiry.
        UpdateExpression:
          'SET #kind = :kind, executionId = :executionId, earlyCompletion = if_not_exists(earlyCompletion, :earlyCompletion), ' +
          'notedAt = if_not_exists(notedAt, :notedAt), expiresAt = if_not_exists(expiresAt, :expiresAt)',
        ExpressionAttributeNames: { '#kind': 'kind' },
        ExpressionAttributeValues: Object.fromEntries(Object.entries(note).map(([name, value]) => [`:${name}`, value])),
      }),
    );
  }

  async heartbeat(jobId: string, executionId: string, now: number): Promise<boolean> {
    return applied(
      this.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: jobKey(jobId),
          UpdateExpression: 'SET heartbeatAt = :now, updatedAt = :now, #version = #version + :one',
          ConditionExpression: RUNNING_THIS_RUN,
          ExpressionAttributeNames: { '#state': 'state', '#version': 'version' },
          ExpressionAttributeValues: { ':running': JobState.Running, ':executionId': executionId, ':now': now, ':one': 1 },
        }),
      ),
    );
  }

  async findRun(kind: JobKind, executionId: string): Promise<RunRef | undefined> {
    const item = await this.runItem(kind, executionId);
    if (!item?.jobId) return undefined; // absent, or only an early completion noted
    return { kind: item.kind as JobKind, executionId: String(item.executionId), jobId: String(item.jobId), pool: String(item.pool) };
  }

  async notedCompletion(kind: JobKind, executionId: string): Promise<RunCompletion | undefined> {
    return (await this.runItem(kind, executionId))?.earlyCompletion as RunCompletion | undefined;
  }

  /** The run's item (its reference, a completion noted for it, or both), read consistently. */
  private async runItem(kind: JobKind, executionId: string): Promise<Record<string, unknown> | undefined> {
    const { Item } = await this.send(new GetCommand({ TableName: this.tableName, Key: runKey(kind, executionId), ConsistentRead: true }));
    return Item;
  }
}

/** A completion noted on its run's key (before the run was recorded, or kept after it could not be applied): a day. */
function noteOf(completion: RunCompletion, now: number) {
  return {
    kind: completion.kind,
    executionId: completion.executionId,
    earlyCompletion: JSON.parse(JSON.stringify(completion)) as RunCompletion, // no undefined fields
    notedAt: now,
    expiresAt: expiresAfter(now, EARLY_COMPLETION_TTL_SECONDS),
  };
}
