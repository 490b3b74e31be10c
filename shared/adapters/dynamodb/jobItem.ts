import { poolOfHolderKey, uncountedHolderKey } from '../../domain/unlimited';
import { isTerminal, JobState } from '../../domain/jobState';
import { endedKeys } from '../../domain/endedIndex';
import type { JobRecord, Move } from '../../ports/jobLedger';
import { SAME_VERSION } from './conditions';
import { jobKey } from './keys';
import type { JobSpec } from '../../kinds/registry';

/**
 * A job record as a DynamoDB item (pk JOB#<id>, sk JOB). The spec is kept as JSON text; the slot is `holderPool`
 * (the key of the sparse `holders` index) and `leaseSince`, set and removed together.
 */
export interface JobItem extends Omit<JobRecord, 'spec' | 'lease'> {
  pk: string;
  sk: string;
  spec: string;
  holderPool?: string;
  leaseSince?: number;
  /** the slot was taken without a counter (an unlimited pool's job): set and removed with holderPool */
  leaseUncounted?: boolean;
  /** a scheduled job due beyond 15 minutes: the keys of the sparse `due` index */
  dueBucket?: string;
  dueSk?: string;
  /** a job in a terminal state: the keys of the sparse `ended` index (shared/domain/endedIndex.ts) */
  endedBucket?: string;
  endedSk?: string;
  expiresAt?: number;
}

export const SECONDS_PER_DAY = 86_400;

/** The TTL attribute DynamoDB acts on: epoch seconds, `seconds` after `now` (ms). */
export function expiresAfter(now: number, seconds: number): number {
  return Math.floor(now / 1000) + seconds;
}

/** The slot's key in the holders index: its pool, or for an uncounted slot its shard of the pool (uncountedHolderKey). */
export function holderKeyOf(lease: { pool: string; uncounted?: boolean }, jobId: string): string {
  return lease.uncounted ? uncountedHolderKey(lease.pool, jobId) : lease.pool;
}

export function toJobItem(record: JobRecord): JobItem {
  const { spec, lease, ...rest } = record;
  return {
    ...jobKey(record.jobId),
    ...rest,
    spec: JSON.stringify(spec),
    ...(lease && { holderPool: holderKeyOf(lease, record.jobId), leaseSince: lease.since }),
    ...(lease?.uncounted && { leaseUncounted: true }),
    // A record written ended (a job that could never run) is on the ended index from its first write.
    ...(isTerminal(record.state) &&
      endedKeys(record.state, Math.max(record.updatedAt, record.endedAt ?? 0, record.deadLetteredAt ?? 0), record.jobId)),
  };
}

export function fromJobItem(item: Record<string, unknown>): JobRecord {
  const {
    pk: _pk,
    sk: _sk,
    expiresAt: _ttl,
    dueBucket: _bucket,
    dueSk: _dueSk,
    endedBucket: _endedBucket,
    endedSk: _endedSk,
    spec,
    holderPool,
    leaseSince,
    leaseUncounted,
    ...rest
  } = item as unknown as JobItem;
  return {
    ...(rest as Omit<JobRecord, 'spec'>),
    spec: JSON.parse(spec) as JobSpec,
    ...(holderPool !== undefined && {
      lease: { pool: poolOfHolderKey(holderPool), since: Number(leaseSince), ...(leaseUncounted === true && { uncounted: true }) },
    }),
  };
}

/** What a move does to the slot on the record: `take` sets it, `free` removes it, `keep` leaves it. */
export type LeaseChange = { take: { pool: string; since: number; uncounted?: boolean } } | 'free' | 'keep';

export interface UpdateParts {
  UpdateExpression: string;
  ConditionExpression: string;
  ExpressionAttributeNames: Record<string, string>;
  ExpressionAttributeValues: Record<string, unknown>;
}

/**
 * The UpdateItem of a version-fenced move: new state, updatedAt, version + 1, the patch's defined fields, the lease
 * change, and the TTL once the job is terminal (unless `expires` is false: a terminal job keeping its slot). `condition`
 * defaults to SAME_VERSION (it may add to it).
 */
export function moveUpdate(
  move: Move,
  now: number,
  lease: LeaseChange,
  retentionDays: number,
  condition: string = SAME_VERSION,
  expires: boolean = isTerminal(move.to),
): UpdateParts {
  const names: Record<string, string> = { '#state': 'state', '#version': 'version' };
  const values: Record<string, unknown> = { ':to': move.to, ':now': now, ':version': move.version, ':one': 1 };
  const sets = ['#state = :to', 'updatedAt = :now', '#version = #version + :one'];
  const removes: string[] = [];
  for (const [field, value] of Object.entries(move.patch ?? {})) {
    if (value === undefined) continue;
    names[`#${field}`] = field;
    values[`:${field}`] = value;
    sets.push(`#${field} = :${field}`);
  }
  // Every move out of scheduled takes the job off the due index (absent attributes: nothing is written to the index).
  if (move.to !== JobState.Scheduled) removes.push('dueBucket', 'dueSk');
  if (lease === 'free') removes.push('holderPool', 'leaseSince', 'leaseUncounted');
  else if (lease !== 'keep') {
    values[':holderPool'] = holderKeyOf(lease.take, move.jobId);
    values[':leaseSince'] = lease.take.since;
    sets.push('holderPool = :holderPool', 'leaseSince = :leaseSince');
    if (lease.take.uncounted) {
      values[':uncounted'] = true;
      sets.push('leaseUncounted = :uncounted');
    }
  }
  // A move to a terminal state puts the job on the ended index, keyed by this write's time; terminal states are never
  // left (TRANSITIONS), and a redrive deletes the record, index entry and all. A dead -> dead move (a kept slot given
  // back) moves the entry to its own time. The key's time is never before the record's endedAt or deadLetteredAt, so a
  // Query from a time finds every job that ended since.
  if (isTerminal(move.to)) {
    const at = Math.max(now, Number(move.patch?.endedAt ?? 0), Number(move.patch?.deadLetteredAt ?? 0));
    const keys = endedKeys(move.to, at, move.jobId);
    values[':endedBucket'] = keys.endedBucket;
    values[':endedSk'] = keys.endedSk;
    sets.push('endedBucket = :endedBucket', 'endedSk = :endedSk');
  }
  if (expires) {
    values[':expiresAt'] = expiresAfter(now, retentionDays * SECONDS_PER_DAY);
    sets.push('expiresAt = :expiresAt');
  }
  return {
    UpdateExpression: `SET ${sets.join(', ')}${removes.length ? ` REMOVE ${removes.join(', ')}` : ''}`,
    ConditionExpression: condition,
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
  };
}
