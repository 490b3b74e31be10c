import { isValidLimit, MAX_POOL_LIMIT } from '../domain/pool';
import { InvalidJobError } from '../errors';
import type { SluiceDeps } from './deps';
import { HandOff } from './handOff';

export interface PoolView {
  name: string;
  limit: number;
  inUse: number;
  waiting: number;
  holders: string[];
}

/** Pool limits change at run time: lowering stops new starts (running jobs go on), raising lets waiting jobs in at once. */
export class PoolAdmin {
  private readonly handOff: HandOff;

  constructor(private readonly deps: Pick<SluiceDeps, 'leases' | 'queue' | 'clock' | 'log' | 'metrics'>) {
    this.handOff = new HandOff(deps);
  }

  async setLimit(pool: string, limit: number): Promise<{ admitted: number }> {
    if (!isValidLimit(limit)) throw new InvalidJobError(`limit must be a whole number from 0 to ${MAX_POOL_LIMIT}, got ${limit}`);
    await this.deps.leases.setLimit(pool, limit);
    const admitted = await this.handOff.fill(pool);
    this.deps.log.info('pool limit set', { pool, limit, admitted });
    return { admitted };
  }

  async list(): Promise<PoolView[]> {
    const views: PoolView[] = [];
    for (const name of await this.deps.leases.listPools()) {
      const pool = await this.deps.leases.getPool(name);
      if (!pool) continue;
      views.push({ name, limit: pool.limit, inUse: pool.inUse, waiting: await this.deps.leases.countWaiters(name), holders: Object.keys(pool.holders) });
    }
    return views;
  }
}
