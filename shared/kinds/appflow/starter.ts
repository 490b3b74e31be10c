import {
  CancelFlowExecutionsCommand,
  DescribeFlowExecutionRecordsCommand,
  type ExecutionRecord,
  StartFlowCommand,
} from '@aws-sdk/client-appflow';
import { AppflowClient } from '@aws-sdk/client-appflow';
import { jobApiClient } from '../../adapters/awsClients';
import { startFailure, statusFailure, stopFailure } from '../../adapters/apiErrors';
import { PermanentStartError } from '../../errors';
import { type JobStarter, RunStatus, type StatusOptions } from '../../ports/jobStarter';
import { StopResult } from '../apiErrors';
import type { StarterOptions } from '../kindDefinition';
import { CANCEL_FLOW_EXECUTIONS, DESCRIBE_FLOW_EXECUTION_RECORDS, START_FLOW } from './apiErrors';
import { APPFLOW_KIND } from './spec';
import type { JobSpec } from '../registry';

/** AppFlow execution statuses (DescribeFlowExecutionRecords). */
export const AppFlowExecutionStatus = {
  InProgress: 'InProgress',
  Successful: 'Successful',
  Error: 'Error',
  CancelStarted: 'CancelStarted',
  Canceled: 'Canceled',
} as const;

/** Pages of execution records (100 each) looked through for one run before answering Unknown: 5,000 records. */
export const MAX_STATUS_PAGES = 50;
const RECORDS_PER_PAGE = 100;

/** AppFlow's clock and ours may disagree: a record is only taken as older than the job's first start past this margin. */
export const CLOCK_SKEW_MARGIN_MS = 5 * 60_000;

export interface AppFlowStarterOptions {
  maxStatusPages?: number;
  /** Told when a lookup gave up at maxStatusPages (default console.warn): the run may exist, Unknown is a guess. */
  warn?: (message: string, details: Record<string, unknown>) => void;
}

function flowNameOf(job: JobSpec): string {
  if (job.kind !== APPFLOW_KIND) throw new PermanentStartError(`job ${job.id} is not an AppFlow job`, 'WrongKind');
  return job.flowName;
}

/**
 * AppFlow: StartFlow with a client token derived from the job id, so a repeated start of the same job (a retry, a
 * duplicate delivery, a crash before recording the run) returns the first run instead of starting a second (AppFlow
 * keeps the token for 8 hours). The SDK would otherwise fill in a random token.
 */
export class AppFlowStarter implements JobStarter {
  readonly kind = APPFLOW_KIND;

  private readonly maxStatusPages: number;
  private readonly warn: NonNullable<AppFlowStarterOptions['warn']>;

  constructor(
    private readonly appflow: AppflowClient,
    options: AppFlowStarterOptions = {},
  ) {
    this.maxStatusPages = options.maxStatusPages ?? MAX_STATUS_PAGES;
    this.warn = options.warn ?? ((message, details) => console.warn(message, details));
  }

  async start(job: JobSpec): Promise<{ executionId: string }> {
    const flowName = flowNameOf(job);
    let executionId: string | undefined;
    try {
      ({ executionId } = await this.appflow.send(new StartFlowCommand({ flowName, clientToken: `sluice-${job.id}` })));
    } catch (error) {
      throw startFailure(START_FLOW, error, `StartFlow ${flowName}`);
    }
    // Only on-demand flows return an execution id; a scheduled or event flow cannot be run by Sluice.
    if (!executionId) throw new PermanentStartError(`StartFlow ${flowName} returned no executionId: is the flow on-demand?`, 'NotOnDemand');
    return { executionId };
  }

  /**
   * Looks for the run in DescribeFlowExecutionRecords. AppFlow does not document the order of the records: the lookup
   * stops at a page older than `requestedSince` (less the clock margin) only while every record so far came newest
   * first; once one does not, nothing is assumed and it reads on to the end or the page cap. It answers Gone when the
   * run is not listed (the records were read to their end, or to records older than the run can be) or the flow does
   * not exist, and Unknown, with a warning, when the cap ran out first (the reconciler then keeps the slot). Another
   * failed call throws JobApiError (DESCRIBE_FLOW_EXECUTION_RECORDS says which).
   */
  async status(job: JobSpec, executionId: string, options: StatusOptions = {}): Promise<RunStatus> {
    const flowName = flowNameOf(job);
    const olderThan = options.requestedSince === undefined ? undefined : options.requestedSince - CLOCK_SKEW_MARGIN_MS;
    const order = new NewestFirstCheck();
    let nextToken: string | undefined;
    for (let page = 0; page < this.maxStatusPages; page++) {
      let out;
      try {
        out = await this.appflow.send(new DescribeFlowExecutionRecordsCommand({ flowName, maxResults: RECORDS_PER_PAGE, nextToken }));
      } catch (error) {
        return statusFailure(DESCRIBE_FLOW_EXECUTION_RECORDS, error, `DescribeFlowExecutionRecords ${flowName}`);
      }
      const records = out.flowExecutions ?? [];
      const found = records.find((e) => e.executionId === executionId);
      if (found) return mapStatus(found.executionStatus);
      order.see(records);
      const allOlder = olderThan !== undefined && records.length > 0 && records.every((r) => (startedAt(r) ?? Infinity) < olderThan);
      if (allOlder && order.holds) return RunStatus.Gone;
      nextToken = out.nextToken;
      if (!nextToken) return RunStatus.Gone;
    }
    this.warn('AppFlow run lookup gave up: the run may exist but was not found', {
      flowName,
      executionId,
      jobId: job.id,
      recordsSearched: this.maxStatusPages * RECORDS_PER_PAGE,
      ...(options.requestedSince !== undefined ? { requestedSince: new Date(options.requestedSince).toISOString() } : {}),
    });
    return RunStatus.Unknown;
  }

  /** A run AppFlow lists as not cancellable (`invalidExecutions`: it is not in progress) had already ended. */
  async stop(job: JobSpec, executionId: string): Promise<StopResult> {
    const flowName = flowNameOf(job);
    try {
      const out = await this.appflow.send(new CancelFlowExecutionsCommand({ flowName, executionIds: [executionId] }));
      return out.invalidExecutions?.includes(executionId) ? StopResult.AlreadyEnded : StopResult.Stopped;
    } catch (error) {
      return stopFailure(CANCEL_FLOW_EXECUTIONS, error, `CancelFlowExecutions ${flowName}`);
    }
  }
}

/** The kind's starter on the process's AppFlow client (one attempt: a throttled start must reach Sluice at once). */
export function createStarter(options: StarterOptions): AppFlowStarter {
  return new AppFlowStarter(
    jobApiClient('appflow', () => new AppflowClient({ maxAttempts: 1 })),
    { warn: (message, details) => options.warn(message, details) },
  );
}

/** DescribeFlowExecutionRecords' executionStatus -> RunStatus (exported for the conformance suite). */
export function mapStatus(status: string | undefined): RunStatus {
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

const startedAt = (record: ExecutionRecord): number | undefined => record.startedAt?.getTime();

/** Whether every record seen so far has a start time and came no newer than the one before it. */
class NewestFirstCheck {
  holds = true;
  private last: number | undefined;

  see(records: readonly ExecutionRecord[]): void {
    for (const record of records) {
      const t = startedAt(record);
      if (t === undefined || (this.last !== undefined && t > this.last)) this.holds = false;
      this.last = t ?? this.last;
    }
  }
}
