import { BatchStopJobRunCommand, GetJobRunCommand, GetJobRunsCommand, type GlueClient, StartJobRunCommand } from '@aws-sdk/client-glue';
import { JobKind, type GlueJob, type JobSpec } from '../../domain/job';
import { PermanentStartError } from '../../errors';
import { type JobStarter, RunStatus } from '../../ports/jobStarter';
import { classifyStartError } from '../startErrors';

/** Glue job run states (GetJobRun). ERROR and WAITING produce no event, so the reconciler must ask. */
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
} as const;

/**
 * Glue has no idempotency token, so every run carries the job id as an argument; before starting again a job that may
 * have started already, the recent runs are searched for it. Glue scripts ignore arguments they do not read.
 */
export const JOB_ID_ARGUMENT = '--sluice-job-id';

const RECENT_RUN_PAGES = 3;

function glueJobOf(job: JobSpec): GlueJob {
  if (job.kind !== JobKind.Glue) throw new PermanentStartError(`job ${job.id} is not a Glue job`, 'WrongKind');
  return job;
}

export class GlueStarter implements JobStarter {
  readonly kind = JobKind.Glue;

  constructor(private readonly glue: GlueClient) {}

  async start(job: JobSpec, options: { mayHaveStarted?: boolean } = {}): Promise<{ executionId: string }> {
    const glueJob = glueJobOf(job);
    try {
      if (options.mayHaveStarted) {
        const existing = await this.findRun(glueJob);
        if (existing) return { executionId: existing };
      }
      const { JobRunId } = await this.glue.send(
        new StartJobRunCommand({ JobName: glueJob.jobName, Arguments: { ...glueJob.arguments, [JOB_ID_ARGUMENT]: glueJob.id } }),
      );
      if (!JobRunId) throw new PermanentStartError(`StartJobRun ${glueJob.jobName} returned no JobRunId`, 'NoRunId');
      return { executionId: JobRunId };
    } catch (error) {
      if (error instanceof PermanentStartError) throw error;
      throw classifyStartError(error, `StartJobRun ${glueJob.jobName}`);
    }
  }

  async status(job: JobSpec, executionId: string): Promise<RunStatus> {
    const { JobRun } = await this.glue.send(new GetJobRunCommand({ JobName: glueJobOf(job).jobName, RunId: executionId }));
    return mapState(JobRun?.JobRunState);
  }

  async stop(job: JobSpec, executionId: string): Promise<void> {
    await this.glue.send(new BatchStopJobRunCommand({ JobName: glueJobOf(job).jobName, JobRunIds: [executionId] }));
  }

  private async findRun(job: GlueJob): Promise<string | undefined> {
    let NextToken: string | undefined;
    for (let page = 0; page < RECENT_RUN_PAGES; page++) {
      const out = await this.glue.send(new GetJobRunsCommand({ JobName: job.jobName, MaxResults: 200, NextToken }));
      const run = out.JobRuns?.find((r) => r.Arguments?.[JOB_ID_ARGUMENT] === job.id);
      if (run?.Id) return run.Id;
      NextToken = out.NextToken;
      if (!NextToken) return undefined;
    }
    return undefined;
  }
}

function mapState(state: string | undefined): RunStatus {
  switch (state) {
    case GlueRunState.Succeeded:
      return RunStatus.Succeeded;
    case GlueRunState.Failed:
    case GlueRunState.Error:
    case GlueRunState.Stopped:
    case GlueRunState.Timeout:
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
