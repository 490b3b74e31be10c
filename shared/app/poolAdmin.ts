import { JobState } from '../domain/jobState';
import { isValidLimit, MAX_POOL_LIMIT } from '../domain/pool';
import { intervalOf } from '../domain/rate';
import { InvalidJobError } from '../errors';
import type { SluiceDeps } from './deps';
import { configuredRate } from './gates';
import { HandOff } from './handOff';
import { allHolders } from './holders';
import { revokeReservation } from './revoke';

export interface PoolView {
  name: string;
  limit: number;
  inUse: number;
  waiting: number;
  holders: string[];
}

/** `settings`, when the admin runs beside the functions (not the CLI): a limit it creates gets its configured rate. */
type AdminDeps = Pick<SluiceDeps, 'leases' | 'ledger' | 'queue' | 'clock' | 'log' | 'metrics'> & Partial<Pick<SluiceDeps, 'settings'>>;

/**
 * Pool limits change at run time. Raising lets waiting jobs in at once. Lowering stops new starts and never touches
 * running jobs; reservations not started yet are taken back while the pool is over the new limit (they wait again, in
 * their place), so once setLimit returns nothing starts until fewer than the new limit hold slots.
 */
export class PoolAdmin {
  private readonly handOff: HandOff;

  constructor(private readonly deps: AdminDeps) {
    this.handOff = new HandOff(deps);
  }

  async setLimit(pool: string, limit: number): Promise<{ admitted: number; revoked: number }> {
    if (!isValidLimit(limit)) throw new InvalidJobError(`limit must be a whole number from 0 to ${MAX_POOL_LIMIT}, got ${limit}`);
    const rate = configuredRate(pool, this.deps.settings?.rates ?? {});
    await this.deps.leases.setLimit(pool, limit, rate === undefined ? undefined : intervalOf(rate));
    const revoked = await this.revokeOverLimit(pool);
    const admitted = await this.handOff.fill(pool);
    this.deps.log.info('pool limit set', { pool, limit, admitted, revoked });
    return { admitted, revoked };
  }

  /**
   * Sets a limit's start rate (starts per second), or removes it (undefined); the gate must exist. Jobs waiting for
   * it are let in as the new rate allows.
   */
  async setRate(gate: string, startsPerSecond: number | undefined): Promise<{ admitted: number }> {
    await this.deps.leases.setRate(gate, startsPerSecond === undefined ? undefined : intervalOf(startsPerSecond));
    const admitted = await this.handOff.fill(gate);
    this.deps.log.info('start rate set', { pool: gate, startsPerSecond, admitted });
    return { admitted };
  }

  async list(): Promise<PoolView[]> {
    const views: PoolView[] = [];
    for (const name of await this.deps.leases.listPools()) {
      const pool = await this.deps.leases.getPool(name);
      if (!pool) continue;
      views.push({
        name,
        limit: pool.limit,
        inUse: pool.inUse,
        waiting: await this.deps.leases.countWaiters(name),
        holders: await this.holders(name),
      });
    }
    return views;
  }

  private async holders(pool: string): Promise<string[]> {
    return (await allHolders(this.deps.leases, pool)).map((holder) => holder.jobId);
  }

  private async revokeOverLimit(pool: string): Promise<number> {
    let revoked = 0;
    const snapshot = await this.deps.leases.getPool(pool);
    if (!snapshot || snapshot.inUse <= snapshot.limit) return 0;
    for (const jobId of await this.holders(pool)) {
      const record = await this.deps.ledger.get(jobId);
      if (record?.state !== JobState.Reserved) continue;
      if (await revokeReservation(this.deps, record)) revoked++;
      const now = await this.deps.leases.getPool(pool);
      if (!now || now.inUse <= now.limit) break;
    }
    return revoked;
  }
}
