import { AppflowClient, DescribeFlowExecutionRecordsCommand, StartFlowCommand } from '@aws-sdk/client-appflow';
import { GetJobRunCommand, GlueClient, StartJobRunCommand } from '@aws-sdk/client-glue';
import { countRequests, RequestCounter } from '../../local/infra/requestCounter';
import type { BenchJob } from '../workload';

/** A started run, as a baseline scheduler remembers it. */
export interface StartedRun {
  job: BenchJob;
  executionId: string;
}

const RUNNING = new Set(['InProgress', 'CancelStarted', 'STARTING', 'RUNNING', 'STOPPING', 'WAITING']);

/**
 * The job APIs as the baselines call them: real SDK clients against the simulator, each call counted. The two-call
 * interface of the Step Functions design (`start(params) -> context`, `getStatus(context)`).
 */
export class SimJobApi {
  readonly requests = new RequestCounter();
  private readonly appflow: AppflowClient;
  private readonly glue: GlueClient;

  constructor(endpoint: string, region: string, credentials: { accessKeyId: string; secretAccessKey: string }) {
    // One attempt per call, so every request is counted once. Keep-alive as Sluice's clients (the simulator keeps idle
    // connections open like AWS, so a tick every ~5 s does not meet a socket being closed).
    const options = { endpoint, region, credentials, maxAttempts: 1 };
    this.appflow = new AppflowClient(options);
    this.glue = new GlueClient(options);
    countRequests(this.appflow, 'appflow', this.requests);
    countRequests(this.glue, 'glue', this.requests);
  }

  async start(job: BenchJob): Promise<StartedRun> {
    const { spec } = job;
    if (spec.kind === 'appflow') {
      const { executionId } = await this.appflow.send(new StartFlowCommand({ flowName: spec.flowName }));
      return { job, executionId: executionId! };
    }
    if (spec.kind !== 'glue') throw new Error(`the baselines run AppFlow and Glue jobs, not ${spec.kind}`);
    const { JobRunId } = await this.glue.send(new StartJobRunCommand({ JobName: spec.jobName, Arguments: spec.arguments }));
    return { job, executionId: JobRunId! };
  }

  async isRunning(run: StartedRun): Promise<boolean> {
    const { spec } = run.job;
    if (spec.kind === 'appflow') {
      const out = await this.appflow.send(new DescribeFlowExecutionRecordsCommand({ flowName: spec.flowName, maxResults: 10 }));
      const record = out.flowExecutions?.find((e) => e.executionId === run.executionId);
      return record !== undefined && RUNNING.has(record.executionStatus ?? '');
    }
    if (spec.kind !== 'glue') throw new Error(`the baselines run AppFlow and Glue jobs, not ${spec.kind}`);
    const out = await this.glue.send(new GetJobRunCommand({ JobName: spec.jobName, RunId: run.executionId }));
    return RUNNING.has(out.JobRun?.JobRunState ?? '');
  }

  destroy(): void {
    this.appflow.destroy();
    this.glue.destroy();
  }
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)));
