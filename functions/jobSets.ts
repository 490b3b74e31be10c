import type { Context } from 'aws-lambda';
import { z } from 'zod';
import { JobSetRunner } from '../shared/app/jobSets';
import { loadJobSets } from '../shared/config/jobSetsFile';
import { readEnv } from '../shared/config/settings';
import type { JobSet } from '../shared/domain/jobSets';
import { container } from '../shared/runtime/container';

/** What a set's schedule sends (its target Input, with EventBridge Scheduler's `<aws.scheduler.scheduled-time>`). */
const FireSchema = z.object({ set: z.string().min(1), scheduledTime: z.string().min(1) }).strict();

/** The sets file read once per process (per file: the local stack may point a later stack at another). */
const loaded = new Map<string, JobSet[]>();

/**
 * A job set's schedule fired: enqueue the run's jobs. A failure throws, and EventBridge Scheduler invokes it again
 * (its retry policy): the same run's ids are sent again, and the acquirer runs each job once.
 */
export const handler = async (event: unknown, context: Context) => {
  const { logger, deps } = container();
  logger.addContext(context);
  const file = readEnv().JOB_SETS_FILE;
  const sets = loaded.get(file) ?? loadJobSets(file);
  loaded.set(file, sets);
  const fire = FireSchema.parse(event);
  return new JobSetRunner({ ...deps, sets: deps.sets! }, sets).fire(fire);
};
