import {
  CancelFlowExecutionsCommand,
  DescribeFlowExecutionRecordsCommand,
  type ExecutionRecord,
  StartFlowCommand,
} from '@aws-sdk/client-appflow';
import { AppflowClient } from '@aws-sdk/client-appflow';
import { jobApiClient } from '../../adapters/awsClients';
import { classifyStartError } from '../../adapters/startErrors';
import type { JobSpec } from '../../domain/job';
import { PermanentStartError } from '../../errors';
import { type JobStarter, RunStatus, type StatusOptions } from '../../ports/jobStarter';
import type { StarterOptions } from '../kindDefinition';
import { APPFLOW_START_ERRORS } from './startErrors';
import { APPFLOW_KIND } from './spec';

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
      throw classifyStartError(error, `StartFlow ${flowName}`, APPFLOW_START_ERRORS);
    }
    // Only on-demand flows return an execution id; a scheduled or event flow cannot be run by Sluice.
    if (!executionId) throw new PermanentStartError(`StartFlow ${flowName} returned no executionId: is the flow on-demand?`, 'NotOnDemand');
    return { executionId };
  }

  /**
   * Looks for the run in DescribeFlowExecutionRecords. AppFlow does not document the order of the records: the lookup
   * stops at a page older than `requestedSince` (less the clock margin) only while every record so far came newest
   * first; once one does not, nothing is assumed and it reads on to the end or the page cap. It answers Unknown
   * when the run is not listed, and also, with a warning, when the cap ran out first (the reconciler then keeps the
   * slot until the maximum run time).
   */
  async status(job: JobSpec, executionId: string, options: StatusOptions = {}): Promise<RunStatus> {
    const flowName = flowNameOf(job);
    const olderThan = options.requestedSince === undefined ? undefined : options.requestedSince - CLOCK_SKEW_MARGIN_MS;
    const order = new NewestFirstCheck();
    let nextToken: string | undefined;
    for (let page = 0; page < this.maxStatusPages; page++) {
      const out = await this.appflow.send(new DescribeFlowExecutionRecordsCommand({ flowName, maxResults: RECORDS_PER_PAGE, nextToken }));
      const records = out.flowExecutions ?? [];
      const found = records.find((e) => e.executionId === executionId);
      if (found) return mapStatus(found.executionStatus);
      order.see(records);
      const allOlder = olderThan !== undefined && records.length > 0 && records.every((r) => (startedAt(r) ?? Infinity) < olderThan);
      if (allOlder && order.holds) return RunStatus.Unknown;
      nextToken = out.nextToken;
      if (!nextToken) return RunStatus.Unknown;
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

  async stop(job: JobSpec, executionId: string): Promise<void> {
    await this.appflow.send(new CancelFlowExecutionsCommand({ flowName: flowNameOf(job), executionIds: [executionId] }));
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
