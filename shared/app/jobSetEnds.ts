import type { SluiceDeps } from './deps';
import { JobSetRunner } from './jobSets';
import type { JobSpec } from '../kinds/registry';

/**
 * Called wherever a job reaches a final state (a run's completion, a dead-letter, a callback's deadline): a job of a
 * set counts itself on its run. A no-op for other jobs, or without job sets configured; never throws.
 */
export async function jobEnded(deps: SluiceDeps, spec: JobSpec): Promise<void> {
  if (!spec.jobSet || !deps.sets) return;
  await new JobSetRunner({ ...deps, sets: deps.sets }, []).jobEnded(spec);
}
