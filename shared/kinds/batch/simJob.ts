import type { EventContext } from '../../../local/simulators/events';
import type { SimOutcome, SimRun } from '../../../local/simulators/model';

/**
 * A Batch job as the simulator describes it (DescribeJobs' JobDetail; the Job State Change event's detail is the same
 * shape), from its run. Times are epoch milliseconds, as Batch sends them. A run that ended is SUCCEEDED or FAILED
 * with the reason and exit code its outcome implies.
 */
const ENDED: Record<SimOutcome, { statusReason: string; exitCode?: number }> = {
  succeeded: { statusReason: 'Essential container in task exited', exitCode: 0 },
  failed: { statusReason: 'Essential container in task exited', exitCode: 1 },
  timeout: { statusReason: 'Job attempt duration exceeded timeout' },
  stopped: { statusReason: 'Terminated by user' },
};

export const queueArnOf = (ctx: EventContext, queue: string) => `arn:aws:batch:${ctx.region}:${ctx.account}:job-queue/${queue}`;

type RunFacts = Readonly<Pick<SimRun, 'executionId' | 'name' | 'args' | 'status' | 'startCallAt' | 'startedAt' | 'endedAt' | 'outcome'>>;

export function jobDetail(ctx: EventContext, run: RunFacts, stopReason: string | undefined) {
  const ended = run.endedAt !== undefined ? ENDED[run.outcome ?? 'failed'] : undefined;
  const statusReason = run.outcome === 'stopped' && stopReason ? stopReason : ended?.statusReason;
  const container = ended?.exitCode !== undefined ? { exitCode: ended.exitCode } : {};
  const revision = /:(\d+)$/.exec(run.args.jobDefinition ?? '')?.[1] ?? '1';
  return {
    jobArn: `arn:aws:batch:${ctx.region}:${ctx.account}:job/${run.executionId}`,
    jobName: run.args.jobName ?? '',
    jobId: run.executionId,
    jobQueue: queueArnOf(ctx, run.args.jobQueue ?? ''),
    status: run.status,
    statusReason,
    attempts: ended
      ? [
          {
            container: { ...container, logStreamName: `${run.name}/default/${run.executionId}` },
            startedAt: run.startedAt,
            stoppedAt: run.endedAt,
            statusReason,
          },
        ]
      : [],
    createdAt: run.startCallAt,
    startedAt: run.startedAt,
    stoppedAt: run.endedAt,
    dependsOn: [],
    jobDefinition: `arn:aws:batch:${ctx.region}:${ctx.account}:job-definition/${run.name}:${revision}`,
    parameters: {},
    container: { image: 'public.ecr.aws/amazonlinux/amazonlinux:latest', command: ['run'], ...container },
    platformCapabilities: ['FARGATE'],
    tags: {},
  };
}

/** ListJobs' JobSummary of a job (undefined fields are left out of the answer). */
export function jobSummary(ctx: EventContext, run: RunFacts) {
  const { jobArn, jobName, jobId, status, statusReason, createdAt, startedAt, stoppedAt, container } = jobDetail(ctx, run, undefined);
  return { jobArn, jobName, jobId, status, statusReason, createdAt, startedAt, stoppedAt, container };
}
