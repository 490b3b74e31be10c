import { UNLIMITED_COUNTER_LIMIT, uncountedHolderKeys } from '../domain/unlimited';
import { allHolders } from '../app/holders';
import { demandOf } from '../domain/job';
import type { JobLedger } from '../ports/jobLedger';
import type { LeaseStore } from '../ports/leaseStore';
import { consoleUrlOf } from './consoleUrl';
import { targetNameOf, targetNameOfBody } from './targetName';

export interface HolderDetail {
  jobId: string;
  kind: string;
  /** what it runs (its kind's targetName), from its record when records are read */
  target?: string;
  /** epoch ms the slot was taken or handed over */
  since: number;
  /** from the job's record, when asked for: reserved, starting, running (or dead, a slot kept) */
  state?: string;
  executionId?: string;
  /** its run in the AWS console (its kind's consoleUrl), when records are read and a region given */
  consoleUrl?: string;
}

export interface WaiterDetail {
  jobId: string;
  kind: string;
  /** what it will run (its kind's targetName), from the spec it waits with */
  target?: string;
  since: number;
}

export interface PoolDetail {
  name: string;
  /** the counter's limit (an unlimited pool's: UNLIMITED_COUNTER_LIMIT, see `unlimited`) */
  limit: number;
  /** a pool configured "unlimited": `inUse` counts its holders, those its counter counts and those it does not */
  unlimited?: true;
  /**
   * a pool limited again whose counter does not count yet the jobs started while it was unlimited: it admits nothing;
   * `inUse` counts those jobs' units too (its uncounted holders', from their records), unless `uncountedJobs` is given
   */
  adopting?: true;
  /**
   * an adopting pool read without the job records: how many jobs hold slots its counter does not count yet (their units
   * unknown); `inUse` is then the counter's units only
   */
  uncountedJobs?: number;
  inUse: number;
  /** the start rate, starts per second, if the limit has one */
  startsPerSecond?: number;
  waiting: number;
  /** every holder, the longest-held first */
  held: HolderDetail[];
  /** the next waiting jobs, in the order they will start */
  next: WaiterDetail[];
}

export interface PoolDetailOptions {
  /** read each holder's record for its state and run id (one read per holder) */
  records?: boolean;
  /** how many of the oldest waiters to name */
  waiters?: number;
  /** the AWS region the runs are in, for their console links */
  region?: string;
}

/** Every pool with its holders and its next waiters, read through the lease store and ledger ports (nothing written). */
export async function poolDetails(
  deps: { leases: LeaseStore; ledger?: Pick<JobLedger, 'get'> },
  options: PoolDetailOptions = {},
): Promise<PoolDetail[]> {
  const pools: PoolDetail[] = [];
  for (const name of await deps.leases.listPools()) {
    const pool = await deps.leases.getPool(name);
    if (!pool) continue;
    // An unlimited pool's uncounted slots are listed under its shards (shared/domain/unlimited.ts), not under its name.
    const unlimited = pool.limit >= UNLIMITED_COUNTER_LIMIT;
    const uncountedToo = unlimited || pool.adopting === true;
    const [holders, uncounted, waiting, waiters] = await Promise.all([
      allHolders(deps.leases, name),
      uncountedToo
        ? Promise.all(uncountedHolderKeys(name).map((key) => allHolders(deps.leases, key))).then((lists) => lists.flat())
        : Promise.resolve([]),
      deps.leases.countWaiters(name),
      options.waiters ? deps.leases.oldestWaiters(name, options.waiters) : Promise.resolve([]),
    ]);
    const held = await Promise.all(
      [...holders, ...uncounted].map(async (holder): Promise<HolderDetail> => {
        if (!options.records || !deps.ledger) return { ...holder };
        const record = await deps.ledger.get(holder.jobId);
        const target = record && targetNameOf(record.kind, record.spec);
        const link =
          record?.executionId && options.region ? consoleUrlOf(record.kind, record.spec, record.executionId, options.region) : undefined;
        return {
          ...holder,
          ...(target !== undefined && { target }),
          ...(record && { state: record.state }),
          ...(record?.executionId && { executionId: record.executionId }),
          ...(link !== undefined && { consoleUrl: link }),
        };
      }),
    );
    // An adopting pool's uncounted holders in units (their demand's, as the counter counts), when their records can be
    // read; else as many jobs, said so apart (units and jobs are not added up).
    const adopting = !unlimited && pool.adopting === true;
    const uncountedUnits = adopting && deps.ledger ? await unitsHeldUncounted(deps.ledger, name, uncounted) : undefined;
    pools.push({
      name,
      limit: pool.limit,
      // Uncounted slots move no counter: an unlimited pool's jobs in use are its holders; an adopting pool's, the units
      // its counter counts and those of the slots it does not count yet.
      inUse: unlimited ? held.length : pool.inUse + (uncountedUnits ?? 0),
      ...(unlimited && { unlimited: true as const }),
      ...(adopting && { adopting: true as const }),
      ...(adopting && uncountedUnits === undefined && { uncountedJobs: uncounted.length }),
      ...(pool.rate && { startsPerSecond: Math.round((1000 / pool.rate.intervalMs) * 1000) / 1000 }),
      waiting,
      held: held.sort((a, b) => a.since - b.since || a.jobId.localeCompare(b.jobId)),
      next: waiters.map(({ jobId, kind, since, body }) => {
        const target = targetNameOfBody(body);
        return { jobId, kind, ...(target !== undefined && { target }), since };
      }),
    });
  }
  return pools.sort((a, b) => a.name.localeCompare(b.name));
}

/** The units of the slots of `pool` these holders still hold uncounted, as their records say (their demand's units). */
async function unitsHeldUncounted(
  ledger: Pick<JobLedger, 'get'>,
  pool: string,
  holders: ReadonlyArray<{ jobId: string }>,
): Promise<number> {
  const records = await Promise.all(holders.map((holder) => ledger.get(holder.jobId)));
  return records.reduce(
    (sum, record) => sum + (record?.lease?.uncounted && record.lease.pool === pool ? demandOf(record.spec).units : 0),
    0,
  );
}
