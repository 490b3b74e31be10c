import {
  BatchClient,
  DescribeJobsCommand,
  ListJobsCommand,
  type ListJobsCommandOutput,
  SubmitJobCommand,
  TerminateJobCommand,
} from '@aws-sdk/client-batch';
import { jobApiClient } from '../../adapters/awsClients';
import { lookupFailure, startFailure, statusFailure, stopFailure } from '../../adapters/apiErrors';
import { PermanentStartError, TransientStartError } from '../../errors';
import { type JobStarter, RunStatus, type StartOptions } from '../../ports/jobStarter';
import { ReadTake, StopResult } from '../apiErrors';
import { DESCRIBE_JOBS, LIST_JOBS, SUBMIT_JOB, TERMINATE_JOB } from './apiErrors';
import { ENDED_JOB_LISTED_MS } from './listing';
import { BATCH_KIND, type BatchJob, jobNameOf } from './spec';
import type { JobSpec } from '../registry';

/** A Batch job's status (DescribeJobs): SUBMITTED, PENDING (dependencies), RUNNABLE (waiting for compute), STARTING, RUNNING, then SUCCEEDED or FAILED. */
export const BatchJobStatus = {
  Submitted: 'SUBMITTED',
  Pending: 'PENDING',
  Runnable: 'RUNNABLE',
  Starting: 'STARTING',
  Running: 'RUNNING',
  Succeeded: 'SUCCEEDED',
  Failed: 'FAILED',
} as const;

/** ListJobs pages (100 jobs each with a filter) searched for a job's earlier submission before giving up. */
export const MAX_LOOKUP_PAGES = 10;
const JOBS_PER_PAGE = 100;
/** Batch's clock and ours may disagree: a job is only taken as older than the job's first start request past this margin. */
export const CLOCK_SKEW_MARGIN_MS = 5 * 60_000;
/** The code of the TransientStartError thrown when the search for an earlier submission reached its page cap. */
export const JOB_LOOKUP_LIMIT = 'JobLookupLimit';
/** The code of the TransientStartError thrown when an earlier submission could have ended and dropped out of ListJobs. */
export const JOB_LOOKUP_EXPIRED = 'JobLookupExpired';

function batchJobOf(job: JobSpec): BatchJob {
  if (job.kind !== BATCH_KIND) throw new PermanentStartError(`job ${job.id} is not a Batch job`, 'WrongKind');
  return job;
}

/**
 * AWS Batch: SubmitJob named after the job id (jobNameOf). Batch has no client token, so a start that may have
 * submitted already (StartOptions.mayHaveStarted) first looks for the job by that name: ListJobs on the job's queue
 * with the JOB_NAME filter (newest first; the filter ignores case, so names are compared exactly here), skipping jobs
 * created before the job's first start request (less a clock margin), which belong to an earlier use of the id. A
 * search that fails or reaches its page cap proves nothing: it throws a TransientStartError that is not definite, and
 * the job keeps its slot and tries again rather than submit a second job. Nor can a search made more than a day after
 * the job's first start request (ENDED_JOB_LISTED_MS): an earlier job may have run, ended and dropped out of ListJobs
 * since (the kind's startRetryWindowSeconds keeps retries well inside that day).
 */
export class BatchStarter implements JobStarter {
  readonly kind = BATCH_KIND;
  private readonly maxLookupPages: number;
  private readonly pageSize: number;
  private readonly now: () => number;

  constructor(
    private readonly batch: BatchClient,
    options: { maxLookupPages?: number; pageSize?: number; now?: () => number } = {},
  ) {
    this.maxLookupPages = options.maxLookupPages ?? MAX_LOOKUP_PAGES;
    this.pageSize = options.pageSize ?? JOBS_PER_PAGE;
    this.now = options.now ?? Date.now;
  }

  async start(job: JobSpec, options: StartOptions = {}): Promise<{ executionId: string }> {
    const spec = batchJobOf(job);
    const jobName = jobNameOf(spec.id);
    if (options.mayHaveStarted) {
      const earlier = await this.findJob(spec, jobName, options.requestedSince);
      if (earlier) return { executionId: earlier };
    }
    let jobId: string | undefined;
    try {
      ({ jobId } = await this.batch.send(
        new SubmitJobCommand({
          jobName,
          jobQueue: spec.jobQueue,
          jobDefinition: spec.jobDefinition,
          parameters: spec.parameters,
          containerOverrides: spec.containerOverrides,
          timeout: spec.timeout,
          retryStrategy: spec.retryStrategy,
          shareIdentifier: spec.shareIdentifier,
          schedulingPriorityOverride: spec.schedulingPriorityOverride,
        }),
      ));
    } catch (error) {
      throw startFailure(SUBMIT_JOB, error, `SubmitJob ${spec.jobDefinition} to ${spec.jobQueue}`);
    }
    // No id in an answer: a job may have been submitted all the same, and the next try looks for it by name.
    if (!jobId) throw new TransientStartError(`SubmitJob ${spec.jobDefinition} returned no jobId`, 'NoRunId', { definite: false });
    return { executionId: jobId };
  }

  /**
   * Gone when DescribeJobs leaves the job out: Batch does not know it, or no longer (a job ended more than about a day
   * ago, ENDED_JOB_LISTED_MS). Another failure throws JobApiError (DESCRIBE_JOBS).
   */
  async status(job: JobSpec, executionId: string): Promise<RunStatus> {
    batchJobOf(job);
    let jobs;
    try {
      ({ jobs } = await this.batch.send(new DescribeJobsCommand({ jobs: [executionId] })));
    } catch (error) {
      return statusFailure(DESCRIBE_JOBS, error, `DescribeJobs ${executionId}`);
    }
    const found = jobs?.find((j) => j.jobId === executionId);
    return found ? mapStatus(found.status) : RunStatus.Gone;
  }

  async stop(job: JobSpec, executionId: string): Promise<StopResult> {
    batchJobOf(job);
    try {
      await this.batch.send(new TerminateJobCommand({ jobId: executionId, reason: 'stopped by Sluice (past its maximum run time)' }));
      return StopResult.Stopped;
    } catch (error) {
      return stopFailure(TERMINATE_JOB, error, `TerminateJob ${executionId}`);
    }
  }

  /** The id of the job an earlier call submitted for this job, or undefined when the queue has none. */
  private async findJob(spec: BatchJob, jobName: string, requestedSince: number | undefined): Promise<string | undefined> {
    const olderThan = requestedSince === undefined ? undefined : requestedSince - CLOCK_SKEW_MARGIN_MS;
    if (olderThan !== undefined && this.now() - olderThan >= ENDED_JOB_LISTED_MS) {
      throw new TransientStartError(
        `ListJobs ${spec.jobQueue}: the first start of job ${spec.id} was requested ${new Date(requestedSince!).toISOString()}, ` +
          'so an earlier job of that name may have ended and dropped out of ListJobs; not submitting another',
        JOB_LOOKUP_EXPIRED,
        { definite: false },
      );
    }
    let nextToken: string | undefined;
    for (let page = 0; page < this.maxLookupPages; page++) {
      const out = await this.lookupPage(spec, jobName, nextToken);
      if (out === ReadTake.Gone) return undefined;
      const jobs = out.jobSummaryList ?? [];
      const found = jobs.find((j) => j.jobName === jobName && (olderThan === undefined || (j.createdAt ?? Infinity) >= olderThan));
      if (found?.jobId) return found.jobId;
      // Newest first: once a whole page was created before the job's first start request, no later page holds its job.
      if (olderThan !== undefined && jobs.length > 0 && jobs.every((j) => j.createdAt !== undefined && j.createdAt < olderThan))
        return undefined;
      nextToken = out.nextToken;
      if (!nextToken) return undefined;
    }
    throw new TransientStartError(
      `ListJobs ${spec.jobQueue}: no job named ${jobName} in the newest ${this.maxLookupPages * this.pageSize} of that name; not submitting another`,
      JOB_LOOKUP_LIMIT,
      { definite: false },
    );
  }

  private async lookupPage(
    spec: BatchJob,
    jobName: string,
    nextToken: string | undefined,
  ): Promise<ListJobsCommandOutput | typeof ReadTake.Gone> {
    try {
      return await this.batch.send(
        new ListJobsCommand({
          jobQueue: spec.jobQueue,
          filters: [{ name: 'JOB_NAME', values: [jobName] }],
          maxResults: this.pageSize,
          nextToken,
        }),
      );
    } catch (error) {
      // A failed search proves nothing about an earlier submission: never definite (LIST_JOBS).
      const failure = lookupFailure(LIST_JOBS, error, `ListJobs ${spec.jobQueue}`);
      if (failure === ReadTake.Gone) return failure;
      throw failure;
    }
  }
}

/** The kind's starter on the process's Batch client (one attempt: a throttled start must reach Sluice at once). */
export function createStarter(): BatchStarter {
  return new BatchStarter(jobApiClient('batch', () => new BatchClient({ maxAttempts: 1 })));
}

/** DescribeJobs' status -> RunStatus. RUNNABLE is a job waiting in Batch's own queue for compute: in progress. */
export function mapStatus(status: string | undefined): RunStatus {
  switch (status) {
    case BatchJobStatus.Succeeded:
      return RunStatus.Succeeded;
    case BatchJobStatus.Failed:
      return RunStatus.Failed;
    case BatchJobStatus.Submitted:
    case BatchJobStatus.Pending:
    case BatchJobStatus.Runnable:
    case BatchJobStatus.Starting:
    case BatchJobStatus.Running:
      return RunStatus.InProgress;
    default:
      return RunStatus.Unknown;
  }
}
