import { ANY_RESOURCE, awsConsole, type KindDefinition } from '../kindDefinition';
import { batchEvents } from './events';
import { BATCH_KIND, BatchJobSchema } from './spec';
import { withRevision } from '../revisions';
import { BATCH_API_ERRORS } from './apiErrors';
import type { OverrideUse } from '../../domain/overridePolicy';
import { environmentUse } from '../reservedEnvironment';

/** Job definitions (every revision) and job queues Sluice may submit to. */
const JOB_DEFINITIONS =
  'arn:${AWS::Partition}:batch:${AWS::Region}:${AWS::AccountId}:job-definition/${param:allowedBatchJobDefinitionPattern}';
const JOB_QUEUES = 'arn:${AWS::Partition}:batch:${AWS::Region}:${AWS::AccountId}:job-queue/${param:allowedBatchJobQueuePattern}';
/** Jobs: their ARNs name only their id (job/<uuid>), so no pattern can tell Sluice's from the account's others. */
const JOBS = 'arn:${AWS::Partition}:batch:${AWS::Region}:${AWS::AccountId}:job/*';

/**
 * AWS Batch jobs: SubmitJob named after the job id (a resumed start finds its job with ListJobs by that name),
 * DescribeJobs, TerminateJob, Job State Change (SUCCEEDED, FAILED) for jobs Sluice submitted.
 */
export const batch: KindDefinition<typeof BATCH_KIND, 'Batch', typeof BatchJobSchema> = {
  kind: BATCH_KIND,
  key: 'Batch',
  title: 'AWS Batch jobs',
  schema: BatchJobSchema,
  target: (spec) => spec.jobDefinition,
  // name:revision, or name (from an ARN or as given)
  targetName: (spec) => spec.jobDefinition.slice(spec.jobDefinition.lastIndexOf('/') + 1),
  overrideSettings: ['command', 'environment', 'resources', 'parameters'],
  overrides: (spec) => {
    const c = spec.containerOverrides;
    const uses: OverrideUse[] = [];
    if (spec.parameters) uses.push({ setting: 'parameters', field: 'parameters', names: Object.keys(spec.parameters) });
    if (c?.command) uses.push({ setting: 'command', field: 'containerOverrides.command' });
    if (c?.environment) uses.push({ setting: 'environment', field: 'containerOverrides.environment', ...environmentUse(c.environment) });
    if (c?.resourceRequirements) uses.push({ setting: 'resources', field: 'containerOverrides.resourceRequirements' });
    return uses;
  },
  names: (spec) => [
    // As IAM matches the job definition's ARN, `job-definition/<name>:<revision>` (the latest when none is given).
    { param: 'allowedBatchJobDefinitionPattern', field: 'jobDefinition', name: withRevision(spec.jobDefinition) },
    { param: 'allowedBatchJobQueuePattern', field: 'jobQueue', name: spec.jobQueue.slice(spec.jobQueue.lastIndexOf('/') + 1) },
  ],
  maxRunSeconds: 48 * 3600,
  events: batchEvents,
  iam: {
    params: { allowedBatchJobDefinitionPattern: 'sluice-*', allowedBatchJobQueuePattern: 'sluice-*' },
    // SubmitJob is authorized against both the job definition and the job queue.
    acquirer: [
      { sid: 'SubmitBatchJobsOfDefinitions', actions: ['batch:SubmitJob'], resource: JOB_DEFINITIONS },
      { sid: 'SubmitBatchJobsToQueues', actions: ['batch:SubmitJob'], resource: JOB_QUEUES },
      // ListJobs takes no resource-level permission (UNSCOPABLE_READ_ACTIONS).
      { sid: 'FindBatchJobs', actions: ['batch:ListJobs'], resource: ANY_RESOURCE },
    ],
    reconciler: [
      // DescribeJobs takes no resource-level permission (UNSCOPABLE_READ_ACTIONS).
      { sid: 'BatchJobStatus', actions: ['batch:DescribeJobs'], resource: ANY_RESOURCE },
      { sid: 'StopBatchJobs', actions: ['batch:TerminateJob'], resource: JOBS },
    ],
  },
  sdkService: 'batch',
  apiErrors: BATCH_API_ERRORS,
  /**
   * Batch lists an ended job for only about a day (ListJobs, DescribeJobs): a resumed start later than that after the
   * first submission could miss the earlier job and submit a second.
   */
  startRetryWindowSeconds: 24 * 3600,
  consoleUrl: (_spec, runId, region) => awsConsole(region, 'batch/home', `#jobs/detail/${encodeURIComponent(runId)}`),
};
