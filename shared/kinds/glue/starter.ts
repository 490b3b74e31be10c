import {
  BatchStopJobRunCommand,
  GetJobRunCommand,
  GetJobRunsCommand,
  type GetJobRunsCommandOutput,
  GlueClient,
  StartJobRunCommand,
} from '@aws-sdk/client-glue';
import { jobApiClient } from '../../adapters/awsClients';
import { lookupFailure, startFailure, statusFailure, stopFailure } from '../../adapters/apiErrors';
import { PermanentStartError, TransientStartError } from '../../errors';
import { type JobStarter, RunStatus, type StartOptions } from '../../ports/jobStarter';
import { classifyApiError, ReadTake, StopResult, StopTake } from '../apiErrors';
import { BATCH_STOP_JOB_RUN, GET_JOB_RUN, GET_JOB_RUNS, START_JOB_RUN } from './apiErrors';
import { GLUE_KIND, type GlueJob } from './spec';
import type { JobSpec } from '../registry';

/**
 * Glue job run states (GetJobRun). ERROR, WAITING and EXPIRED produce no event, so the reconciler must ask. WAITING is a
 * run queued for capacity (job run queuing); EXPIRED one that waited past its queuing limit and never ran.
 */
export const GlueRunState = {
  Starting: 'STARTING',
  Running: 'RUNNING',
  Stopping: 'STOPPING',
  Stopped: 'STOPPED',
  Succeeded: 'SUCCEEDED',
  Failed: 'FAILED',
  Error: 'ERROR',
  Waiting: 'WAITING',
  Timeout: 'TIMEOUT',
  Expired: 'EXPIRED',
} as const;

/**
 * Glue has no idempotency token, so every run carries the job id as an argument; before starting again a job that may
 * have started already, the recent runs are searched for it. Glue scripts ignore arguments they do not read.
 */
export const JOB_ID_ARGUMENT = '--sluice-job-id';

/** GetJobRuns pages (200 runs each) searched for a job's earlier run before giving up: 5,000 runs. */
export const MAX_LOOKUP_PAGES = 25;
const RUNS_PER_PAGE = 200;

/** Glue's clock and ours may disagree: a run is only taken as older than the job's first start request past this margin. */
export const CLOCK_SKEW_MARGIN_MS = 5 * 60_000;

/** The code of the TransientStartError thrown when the search for an earlier run reached its page cap. */
export const RUN_LOOKUP_LIMIT = 'RunLookupLimit';

function glueJobOf(job: JobSpec): GlueJob {
  if (job.kind !== GLUE_KIND) throw new PermanentStartError(`job ${job.id} is not a Glue job`, 'WrongKind');
  return job;
}

export class GlueStarter implements JobStarter {
  readonly kind = GLUE_KIND;
  private readonly maxLookupPages: number;

  constructor(
    private readonly glue: GlueClient,
    options: { maxLookupPages?: number } = {},
  ) {
    this.maxLookupPages = options.maxLookupPages ?? MAX_LOOKUP_PAGES;
  }

  async start(job: JobSpec, options: StartOptions = {}): Promise<{ executionId: string }> {
    const glueJob = glueJobOf(job);
    if (options.mayHaveStarted) {
      const existing = await this.findRun(glueJob, options.requestedSince);
      if (existing) return { executionId: existing };
    }
    try {
      const { JobRunId } = await this.glue.send(
        new StartJobRunCommand({ JobName: glueJob.jobName, Arguments: { ...glueJob.arguments, [JOB_ID_ARGUMENT]: glueJob.id } }),
      );
      if (!JobRunId) throw new PermanentStartError(`StartJobRun ${glueJob.jobName} returned no JobRunId`, 'NoRunId');
      return { executionId: JobRunId };
    } catch (error) {
      if (error instanceof PermanentStartError) throw error;
      throw startFailure(START_JOB_RUN, error, `StartJobRun ${glueJob.jobName}`);
    }
  }

  /** Gone when Glue says the run or its job does not exist; another failure throws JobApiError (GET_JOB_RUN). */
  async status(job: JobSpec, executionId: string): Promise<RunStatus> {
    const { jobName } = glueJobOf(job);
    try {
      const { JobRun } = await this.glue.send(new GetJobRunCommand({ JobName: jobName, RunId: executionId }));
      return mapState(JobRun?.JobRunState);
    } catch (error) {
      return statusFailure(GET_JOB_RUN, error, `GetJobRun ${jobName} ${executionId}`);
    }
  }

  /**
   * A run BatchStopJobRun could not stop comes back in its `Errors` (with an ErrorCode), not as an exception: it is
   * taken as already ended (Glue stops only runs in progress), unless its code is one to try again on.
   */
  async stop(job: JobSpec, executionId: string): Promise<StopResult> {
    const { jobName } = glueJobOf(job);
    const what = `BatchStopJobRun ${jobName} ${executionId}`;
    let listed: { ErrorDetail?: { ErrorCode?: string | undefined; ErrorMessage?: string | undefined } | undefined } | undefined;
    try {
      const out = await this.glue.send(new BatchStopJobRunCommand({ JobName: jobName, JobRunIds: [executionId] }));
      listed = out.Errors?.find((e) => e.JobRunId === executionId);
    } catch (error) {
      return stopFailure(BATCH_STOP_JOB_RUN, error, what);
    }
    if (!listed) return StopResult.Stopped;
    const error = { name: listed.ErrorDetail?.ErrorCode, message: listed.ErrorDetail?.ErrorMessage };
    return classifyApiError(BATCH_STOP_JOB_RUN, error).take === StopTake.Transient
      ? stopFailure(BATCH_STOP_JOB_RUN, error, what)
      : StopResult.AlreadyEnded;
  }

  /**
   * The run carrying this job's id, or undefined when Glue has none. GetJobRuns lists runs newest first (documented:
   * "in chronological order, with the newest jobs returned first"), so once a whole page started before
   * `requestedSince` (less the clock margin) no later page can hold the job's run. Without `requestedSince`, or on a job
   * that busy, the search ends at maxLookupPages and throws a TransientStartError that is not definite: the caller
   * keeps the slot and retries, rather than start a second run. A job Glue says does not exist has no run either (the
   * start that follows fails for it); any other failure of the search proves nothing (GET_JOB_RUNS).
   */
  private async findRun(job: GlueJob, requestedSince: number | undefined): Promise<string | undefined> {
    const olderThan = requestedSince === undefined ? undefined : requestedSince - CLOCK_SKEW_MARGIN_MS;
    let NextToken: string | undefined;
    for (let page = 0; page < this.maxLookupPages; page++) {
      const out = await this.lookupPage(job, NextToken);
      if (out === ReadTake.Gone) return undefined;
      const runs = out.JobRuns ?? [];
      const run = runs.find((r) => r.Arguments?.[JOB_ID_ARGUMENT] === job.id);
      if (run?.Id) return run.Id;
      if (olderThan !== undefined && runs.length > 0 && runs.every((r) => r.StartedOn !== undefined && r.StartedOn.getTime() < olderThan)) {
        return undefined;
      }
      NextToken = out.NextToken;
      if (!NextToken) return undefined;
    }
    const searched = this.maxLookupPages * RUNS_PER_PAGE;
    const since =
      requestedSince === undefined ? 'no start time given' : `runs since ${new Date(requestedSince).toISOString()} not exhausted`;
    throw new TransientStartError(
      `GetJobRuns ${job.jobName}: no run of job ${job.id} in the newest ${searched} runs (${since}); not starting another run`,
      RUN_LOOKUP_LIMIT,
      { definite: false },
    );
  }

  private async lookupPage(job: GlueJob, NextToken: string | undefined): Promise<GetJobRunsCommandOutput | typeof ReadTake.Gone> {
    try {
      return await this.glue.send(new GetJobRunsCommand({ JobName: job.jobName, MaxResults: RUNS_PER_PAGE, NextToken }));
    } catch (error) {
      const failure = lookupFailure(GET_JOB_RUNS, error, `GetJobRuns ${job.jobName}`);
      if (failure === ReadTake.Gone) return failure;
      throw failure;
    }
  }
}

/** The kind's starter on the process's Glue client (one attempt: a throttled start must reach Sluice at once). */
export function createStarter(): GlueStarter {
  return new GlueStarter(jobApiClient('glue', () => new GlueClient({ maxAttempts: 1 })));
}

/** GetJobRun's JobRunState -> RunStatus (exported for the conformance suite). */
export function mapState(state: string | undefined): RunStatus {
  switch (state) {
    case GlueRunState.Succeeded:
      return RunStatus.Succeeded;
    case GlueRunState.Failed:
    case GlueRunState.Error:
    case GlueRunState.Stopped:
    case GlueRunState.Timeout:
    case GlueRunState.Expired:
      return RunStatus.Failed;
    case GlueRunState.Starting:
    case GlueRunState.Running:
    case GlueRunState.Stopping:
    case GlueRunState.Waiting:
      return RunStatus.InProgress;
    default:
      return RunStatus.Unknown;
  }
}
