import { type DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { JobKind, JobSpec, RunCompletion } from '../../domain/job';
import { isTerminal, JobState } from '../../domain/jobState';
import type { JobLedger, JobRecord, RunRef, TransitionPatch } from '../../ports/jobLedger';
import { IS_NEW, RUN_NOT_RECORDED, SAME_EXECUTION, stateIn, UNCHANGED_SINCE } from './conditions';
import { applied } from './errors';
import { jobKey, runKey } from './keys';

interface JobItem extends Omit<JobRecord, 'spec'> {
  spec: string;
  expiresAt?: number;
}

const SECONDS_PER_DAY = 86_400;

/** An early completion waits this long for its run to be recorded; most are for runs Sluice never started. */
const EARLY_COMPLETION_TTL_SECONDS = SECONDS_PER_DAY;

export interface LedgerOptions {
  /** How long finished jobs and run references stay before DynamoDB TTL removes them. */
  retentionDays: number;
}

export class DynamoJobLedger implements JobLedger {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly options: LedgerOptions = { retentionDays: 30 },
  ) {}

  async register(spec: JobSpec, now: number): Promise<{ created: boolean; record: JobRecord }> {
    const record: JobRecord = {
      jobId: spec.id,
      pool: spec.pool,
      kind: spec.kind,
      state: JobState.Queued,
      spec,
      attempts: 0,
      firstSeenAt: now,
      updatedAt: now,
    };
    if (
      await applied(
        this.doc.send(
          new PutCommand({
            TableName: this.tableName,
            Item: { ...jobKey(spec.id), ...record, spec: JSON.stringify(spec) },
            ConditionExpression: IS_NEW,
          }),
        ),
      )
    )
      return { created: true, record };
    const existing = await this.get(spec.id);
    if (!existing) throw new Error(`job ${spec.id} exists and vanished at once`);
    return { created: false, record: existing };
  }

  async get(jobId: string): Promise<JobRecord | undefined> {
    const { Item } = await this.doc.send(new GetCommand({ TableName: this.tableName, Key: jobKey(jobId), ConsistentRead: true }));
    if (!Item) return undefined;
    const { pk: _pk, sk: _sk, expiresAt: _ttl, spec, ...rest } = Item as JobItem & { pk: string; sk: string };
    return { ...rest, spec: JSON.parse(spec) as JobSpec };
  }

  async transition(
    jobId: string,
    from: readonly JobState[],
    to: JobState,
    now: number,
    patch: TransitionPatch = {},
    expectExecutionId?: string,
  ): Promise<boolean> {
    const names: Record<string, string> = { '#state': 'state' };
    const values: Record<string, unknown> = { ':to': to, ':now': now };
    const sets = ['#state = :to', 'updatedAt = :now'];
    for (const [field, value] of Object.entries(patch)) {
      if (value === undefined) continue;
      names[`#${field}`] = field;
      values[`:${field}`] = value;
      sets.push(`#${field} = :${field}`);
    }
    if (isTerminal(to)) {
      values[':expiresAt'] = expiresAfter(now, this.options.retentionDays * SECONDS_PER_DAY);
      sets.push('expiresAt = :expiresAt');
    }
    const placeholders = from.map((state, i) => {
      values[`:from${i}`] = state;
      return `:from${i}`;
    });
    let condition = stateIn(placeholders);
    if (expectExecutionId !== undefined) {
      values[':executionId'] = expectExecutionId;
      condition = `${condition} AND ${SAME_EXECUTION}`;
    }
    return applied(
      this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: jobKey(jobId),
          UpdateExpression: `SET ${sets.join(', ')}`,
          ConditionExpression: condition,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
        }),
      ),
    );
  }

  async claimStart(jobId: string, seenUpdatedAt: number, now: number): Promise<boolean> {
    return applied(
      this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: jobKey(jobId),
          UpdateExpression: 'SET updatedAt = :now',
          ConditionExpression: `${stateIn([':starting'])} AND ${UNCHANGED_SINCE}`,
          ExpressionAttributeNames: { '#state': 'state' },
          // Always a new value: a claim in the very millisecond of the last update must still change the record.
          ExpressionAttributeValues: {
            ':starting': JobState.Starting,
            ':seenUpdatedAt': seenUpdatedAt,
            ':now': Math.max(now, seenUpdatedAt + 1),
          },
        }),
      ),
    );
  }

  async recordRun(ref: RunRef, now: number): Promise<RunCompletion | undefined> {
    // One write that also hands back (and clears) a completion noted before the run was recorded.
    const { Attributes } = await this.doc.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: runKey(ref.kind, ref.executionId),
        UpdateExpression:
          'SET #kind = :kind, executionId = :executionId, jobId = :jobId, #pool = :pool, recordedAt = :now, expiresAt = :expiresAt REMOVE earlyCompletion',
        ExpressionAttributeNames: { '#kind': 'kind', '#pool': 'pool' },
        ExpressionAttributeValues: {
          ':kind': ref.kind,
          ':executionId': ref.executionId,
          ':jobId': ref.jobId,
          ':pool': ref.pool,
          ':now': now,
          ':expiresAt': expiresAfter(now, this.options.retentionDays * SECONDS_PER_DAY),
        },
        ReturnValues: 'ALL_OLD',
      }),
    );
    return Attributes?.earlyCompletion as RunCompletion | undefined;
  }

  async noteEarlyCompletion(completion: RunCompletion, now: number): Promise<boolean> {
    return applied(
      this.doc.send(
        new PutCommand({
          TableName: this.tableName,
          Item: {
            ...runKey(completion.kind, completion.executionId),
            kind: completion.kind,
            executionId: completion.executionId,
            earlyCompletion: JSON.parse(JSON.stringify(completion)) as RunCompletion, // no undefined fields
            notedAt: now,
            expiresAt: expiresAfter(now, EARLY_COMPLETION_TTL_SECONDS),
          },
          ConditionExpression: RUN_NOT_RECORDED,
        }),
      ),
    );
  }

  async findRun(kind: JobKind, executionId: string): Promise<RunRef | undefined> {
    const { Item } = await this.doc.send(
      new GetCommand({ TableName: this.tableName, Key: runKey(kind, executionId), ConsistentRead: true }),
    );
    if (!Item?.jobId) return undefined; // absent, or only an early completion noted
    return { kind: Item.kind as JobKind, executionId: String(Item.executionId), jobId: String(Item.jobId), pool: String(Item.pool) };
  }
}

/** The TTL attribute DynamoDB acts on: epoch seconds, `seconds` after `now` (ms). */
function expiresAfter(now: number, seconds: number): number {
  return Math.floor(now / 1000) + seconds;
}
