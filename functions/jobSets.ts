import type { Context } from 'aws-lambda';
import * as z from 'zod';
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
 * A job set's schedule fired: enqueue the run's jobs. EventBridge Scheduler invokes it asynchronously; a failure or a
 * timeout is retried by Lambda (serverless.yml: maximumRetryAttempts, then the job set failures queue). A retry (or a
 * second delivery of the same fire) finds the run written already and sends the same ids again: the acquirer runs each
 * job once.
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
