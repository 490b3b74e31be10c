import * as z from 'zod';
import { base } from '../../domain/job';
import { nameOfJob } from '../runNames';

export const BATCH_KIND = 'batch';

/** A job queue: its name (1-128 letters, digits, `-`, `_`) or its ARN. */
const JOB_QUEUE = /^([A-Za-z0-9_-]{1,128}|arn:aws[a-z-]*:batch:[a-z0-9-]+:\d{12}:job-queue\/[A-Za-z0-9_-]{1,128})$/;
/** A job definition: `name`, `name:revision` or its ARN. */
const JOB_DEFINITION = /^(arn:aws[a-z-]*:batch:[a-z0-9-]+:\d{12}:job-definition\/)?[A-Za-z0-9_-]{1,128}(:\d{1,10})?$/;

const keyValue = z.object({ name: z.string().min(1).max(1024), value: z.string().max(32_768) }).strict();

const containerOverrides = z
  .object({
    command: z.array(z.string().max(32_768)).max(256).optional(),
    environment: z.array(keyValue).max(256).optional(),
    resourceRequirements: z
      .array(z.object({ type: z.enum(['GPU', 'MEMORY', 'VCPU']), value: z.string().min(1).max(64) }).strict())
      .max(3)
      .optional(),
  })
  .strict();

/**
 * One AWS Batch job (SubmitJob) of a job definition on a job queue: parameters, container overrides, a timeout, Batch's
 * own retries, and the share identifier and priority that fair-share queues take. Array and multi-node jobs are not
 * offered (one Sluice job is one Batch job). Sluice sets `jobName` itself (jobNameOf).
 */
export const BatchJobSchema = z
  .object({
    ...base,
    kind: z.literal(BATCH_KIND),
    jobQueue: z.string().regex(JOB_QUEUE, 'jobQueue must be a job queue name or ARN'),
    jobDefinition: z.string().regex(JOB_DEFINITION, 'jobDefinition must be name, name:revision or a job definition ARN'),
    parameters: z.record(z.string().min(1).max(256), z.string().max(32_768)).optional(),
    containerOverrides: containerOverrides.optional(),
    timeout: z
      .object({ attemptDurationSeconds: z.number().int().min(60) })
      .strict()
      .optional(),
    retryStrategy: z
      .object({ attempts: z.number().int().min(1).max(10) })
      .strict()
      .optional(),
    shareIdentifier: z.string().min(1).max(255).optional(),
    schedulingPriorityOverride: z.number().int().min(0).max(9999).optional(),
  })
  .strict();

export type BatchJob = z.infer<typeof BatchJobSchema>;

/**
 * The Batch job name of a job: Batch names are 1-128 letters, digits, `-` and `_`, the first alphanumeric. Ids that
 * fit (no `.` or `:`, at most 121 characters) give `sluice-<id>`; the others `sluiceh-<id with _ for . and :, cut>-<hash>`
 * (runNames.ts): one name per id, never one name for two ids. Batch has no client token: this name is how a resumed
 * start finds the job an earlier call submitted (ListJobs filtered by JOB_NAME).
 */
export const jobNameOf = (jobId: string): string => nameOfJob(jobId, { maxLength: 128, allowed: /[A-Za-z0-9_-]/ });

/** The name of a job definition (`name`, `name:3` or an ARN): the name the simulator knows a run by. */
export function definitionNameOf(jobDefinition: string): string {
  const tail = jobDefinition.includes('/') ? jobDefinition.slice(jobDefinition.lastIndexOf('/') + 1) : jobDefinition;
  return tail.split(':')[0]!;
}
