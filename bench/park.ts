import { waiterFor } from '../shared/app/waiters';
import { PROTOCOL } from '../shared/domain/protocol';
import { moved, registeredRecord } from '../shared/ports/jobLedger';
import type { Harness } from './harness';
import type { BenchJob } from './workload';

/**
 * Parks `jobs` in their paused pool with the writes the acquirer makes for a first delivery that finds the pool full:
 * one transaction per job that creates its record, waiting, with its waiter item (the lease store's `addWaiter`, the
 * acquirer's park step; the take it tries first fails and writes nothing). Written by the bench's own client (not
 * counted as Sluice's), many at a time: the acquirer parks a few hundred jobs a second here, so a backlog of 10,000
 * took over half a minute to set up through the queue, and a scenario that measures what comes after the backlog is
 * in place (not its arrival) gets the same table sooner. Arrival order is kept: each job is first seen 1 ms after the
 * one before it, all in the past. For jobs of a pool limit only (no fairness key, keyed limit, weight or notBefore).
 */
export async function parkDirectly(h: Harness, jobs: readonly BenchJob[], lanes = 16): Promise<void> {
  for (const { spec } of jobs)
    if (spec.fairnessKey !== undefined || spec.notBefore !== undefined || (spec.weight ?? 1) !== 1 || (spec.limits?.length ?? 0) > 0)
      throw new Error(`parkDirectly parks plain jobs of a pool limit, not ${spec.id}`);
  h.register(jobs);
  const firstSeen = Date.now() - jobs.length;
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(lanes, jobs.length) }, async () => {
      while (next < jobs.length) {
        const i = next++;
        const { spec } = jobs[i]!;
        const now = firstSeen + i;
        const record = registeredRecord(spec, now);
        const move = { jobId: spec.id, version: record.version, to: PROTOCOL.park.to };
        if (!(await h.leases.addWaiter(waiterFor(record, spec.pool), moved(record, move, now))))
          throw new Error(`parking ${spec.id}: the job has a record already`);
      }
    }),
  );
}
