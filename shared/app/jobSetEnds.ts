import { MetricName, type SluiceDeps } from './deps';
import { JobSetRunner } from './jobSets';
import { jobEndDetail } from './jobEndEvent';
import type { JobRecord } from '../ports/jobLedger';
import { SluiceDetailType } from '../ports/eventPublisher';

/**
 * Called wherever a job reaches a final state (a run's completion, a dead-letter, a callback's deadline), with its
 * record as the final write left it: its end is announced on the bus (`Sluice Job Ended`), and a job of a set counts
 * itself on its run. (A cancel, made by `sluice cancel`, is announced only.) Never throws: the end is
 * written already, and an announcement that fails is logged and counted (the job's record and `sluice jobs` keep the
 * truth; an invocation that dies between the write and the announcement announces nothing).
 */
export async function jobEnded(deps: SluiceDeps, ended: JobRecord): Promise<void> {
  // Both at once: neither throws, and the run's count is not kept waiting on the bus.
  const sets = deps.sets;
  await Promise.all([
    announceJobEnd(deps, ended),
    ended.spec.jobSet && sets ? new JobSetRunner({ ...deps, sets }, []).jobEnded(ended.spec) : undefined,
  ]);
}

/** `Sluice Job Ended` for a record in a final state (nothing for another). Never throws. */
export async function announceJobEnd(deps: Pick<SluiceDeps, 'events' | 'clock' | 'metrics' | 'log'>, ended: JobRecord): Promise<void> {
  if (!deps.events) return;
  const detail = jobEndDetail(ended, deps.clock.now());
  if (!detail) return;
  try {
    await deps.events.publish(SluiceDetailType.JobEnded, detail);
  } catch (error) {
    deps.metrics.count(MetricName.JobEndNotAnnounced, 1, ended.pool);
    deps.log.warn('job ended, but its end could not be announced on the bus', {
      jobId: ended.jobId,
      pool: ended.pool,
      kind: ended.kind,
      error: String(error),
    });
  }
}
