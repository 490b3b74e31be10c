import {
  type AppflowClient,
  CancelFlowExecutionsCommand,
  DescribeFlowExecutionRecordsCommand,
  StartFlowCommand,
} from '@aws-sdk/client-appflow';
import { JobKind, type JobSpec } from '../../domain/job';
import { PermanentStartError } from '../../errors';
import { type JobStarter, RunStatus } from '../../ports/jobStarter';
import { classifyStartError } from '../startErrors';

/** AppFlow execution statuses (DescribeFlowExecutionRecords). */
export const AppFlowExecutionStatus = {
  InProgress: 'InProgress',
  Successful: 'Successful',
  Error: 'Error',
  CancelStarted: 'CancelStarted',
  Canceled: 'Canceled',
} as const;

/** How many pages of execution records to look through for one run (100 records a page). */
const MAX_STATUS_PAGES = 5;

function flowNameOf(job: JobSpec): string {
  if (job.kind !== JobKind.AppFlow) throw new PermanentStartError(`job ${job.id} is not an AppFlow job`, 'WrongKind');
  return job.flowName;
}

/**
 * AppFlow: StartFlow with a client token derived from the job id, so a repeated start of the same job (a retry, a
 * duplicate delivery, a crash before recording the run) returns the first run instead of starting a second (AppFlow
 * keeps the token for 8 hours). The SDK would otherwise fill in a random token.
 */
export class AppFlowStarter implements JobStarter {
  readonly kind = JobKind.AppFlow;

  constructor(private readonly appflow: AppflowClient) {}

  async start(job: JobSpec): Promise<{ executionId: string }> {
    const flowName = flowNameOf(job);
    let executionId: string | undefined;
    try {
      ({ executionId } = await this.appflow.send(new StartFlowCommand({ flowName, clientToken: `sluice-${job.id}` })));
    } catch (error) {
      throw classifyStartError(error, `StartFlow ${flowName}`);
    }
    // Only on-demand flows return an execution id; a scheduled or event flow cannot be run by Sluice.
    if (!executionId) throw new PermanentStartError(`StartFlow ${flowName} returned no executionId: is the flow on-demand?`, 'NotOnDemand');
    return { executionId };
  }

  async status(job: JobSpec, executionId: string): Promise<RunStatus> {
    const flowName = flowNameOf(job);
    let nextToken: string | undefined;
    for (let page = 0; page < MAX_STATUS_PAGES; page++) {
      const out = await this.appflow.send(new DescribeFlowExecutionRecordsCommand({ flowName, maxResults: 100, nextToken }));
      const found = out.flowExecutions?.find((e) => e.executionId === executionId);
      if (found) return mapStatus(found.executionStatus);
      nextToken = out.nextToken;
      if (!nextToken) break;
    }
    return RunStatus.Unknown;
  }

  async stop(job: JobSpec, executionId: string): Promise<void> {
    await this.appflow.send(new CancelFlowExecutionsCommand({ flowName: flowNameOf(job), executionIds: [executionId] }));
  }
}

function mapStatus(status: string | undefined): RunStatus {
  switch (status) {
    case AppFlowExecutionStatus.Successful:
      return RunStatus.Succeeded;
    case AppFlowExecutionStatus.Error:
    case AppFlowExecutionStatus.Canceled:
      return RunStatus.Failed;
    case AppFlowExecutionStatus.InProgress:
    case AppFlowExecutionStatus.CancelStarted:
      return RunStatus.InProgress;
    default:
      return RunStatus.Unknown;
  }
}
