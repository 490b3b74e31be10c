import { createHash, randomUUID } from 'node:crypto';
import type { EventBridgeEvent, SimOutcome } from './model';

/**
 * Builders of the completion events AWS puts on the default bus, shaped like real samples:
 * - AppFlow: `resources` holds the flow's internal id (32 hex characters), not its ARN; `time` has no milliseconds;
 *   `start-time` / `end-time` look like `2021-08-24T09:06:20.871Z[UTC]`; counts are strings.
 * - Glue: `resources` is empty; detail is {jobName, severity, state, jobRunId, message}.
 * Only `"Execution Successful"` is a verified AppFlow status; the failure and cancel wordings are a best guess.
 */

export const AppFlowEventStatus = {
  Successful: 'Execution Successful',
  Failed: 'Execution Failed',
  Canceled: 'Execution Canceled',
} as const;
export type AppFlowEventStatus = (typeof AppFlowEventStatus)[keyof typeof AppFlowEventStatus];

export const APPFLOW_SOURCE = 'aws.appflow';
export const APPFLOW_END_DETAIL_TYPE = 'AppFlow End Flow Run Report';
export const GLUE_SOURCE = 'aws.glue';
export const GLUE_DETAIL_TYPE = 'Glue Job State Change';

export interface AppFlowEndFlowRunDetail {
  'flow-name': string;
  'created-by': string;
  'flow-arn': string;
  source: string;
  destination: string;
  'source-object': string;
  'destination-object': string;
  'trigger-type': 'ONDEMAND';
  'num-of-records-processed': string;
  'execution-id': string;
  'num-of-records-filtered': string;
  'start-time': string;
  'num-of-documents-processed': string;
  'end-time': string;
  'num-of-record-failures': string;
  'data-processed': string;
  status: AppFlowEventStatus;
}
export type AppFlowEndFlowRunEvent = EventBridgeEvent<typeof APPFLOW_END_DETAIL_TYPE, AppFlowEndFlowRunDetail>;

export interface GlueJobStateChangeDetail {
  jobName: string;
  severity: 'INFO' | 'WARN' | 'ERROR';
  state: 'SUCCEEDED' | 'FAILED' | 'TIMEOUT' | 'STOPPED';
  jobRunId: string;
  message: string;
}
export type GlueJobStateChangeEvent = EventBridgeEvent<typeof GLUE_DETAIL_TYPE, GlueJobStateChangeDetail>;

export interface EventContext {
  account: string;
  region: string;
}

/** `2021-08-24T09:06:22Z`: EventBridge `time` has second precision. */
export const eventTime = (ms: number): string => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');

/** `2021-08-24T09:06:20.871Z[UTC]`: AppFlow's start-time / end-time. */
export const appflowTime = (ms: number): string => `${new Date(Math.floor(ms)).toISOString()}[UTC]`;

export const flowArn = (ctx: EventContext, flowName: string): string => `arn:aws:appflow:${ctx.region}:${ctx.account}:flow/${flowName}`;

/** A stable stand-in for the flow's internal id, which AWS puts in `resources`. */
export const flowId = (flowName: string): string => createHash('md5').update(flowName).digest('hex');

export interface AppFlowRunFacts {
  flowName: string;
  executionId: string;
  startedAt: number;
  endedAt: number;
  outcome: SimOutcome;
  recordsProcessed: number;
  bytesProcessed: number;
}

export function appflowEndFlowRunEvent(ctx: EventContext, run: AppFlowRunFacts): AppFlowEndFlowRunEvent {
  const status =
    run.outcome === 'succeeded'
      ? AppFlowEventStatus.Successful
      : run.outcome === 'stopped'
        ? AppFlowEventStatus.Canceled
        : AppFlowEventStatus.Failed;
  const detail: AppFlowEndFlowRunDetail = {
    'flow-name': run.flowName,
    'created-by': `arn:aws:sts::${ctx.account}:assumed-role/SluiceSimulator/simulator`,
    'flow-arn': flowArn(ctx, run.flowName),
    source: 'S3',
    destination: 'S3',
    'source-object': `s3://sluice-simulator-source/${run.flowName}`,
    'destination-object': `s3://sluice-simulator-destination/${run.flowName}`,
    'trigger-type': 'ONDEMAND',
    'num-of-records-processed': String(run.recordsProcessed),
    'execution-id': run.executionId,
    'num-of-records-filtered': '0',
    'start-time': appflowTime(run.startedAt),
    'num-of-documents-processed': '0',
    'end-time': appflowTime(run.endedAt),
    'num-of-record-failures': run.outcome === 'failed' || run.outcome === 'timeout' ? '1' : '0',
    'data-processed': String(run.bytesProcessed),
    status,
  };
  return {
    version: '0',
    id: randomUUID(),
    'detail-type': APPFLOW_END_DETAIL_TYPE,
    source: APPFLOW_SOURCE,
    account: ctx.account,
    time: eventTime(run.endedAt),
    region: ctx.region,
    resources: [flowId(run.flowName)],
    detail,
  };
}

export interface GlueRunFacts {
  jobName: string;
  jobRunId: string;
  endedAt: number;
  outcome: SimOutcome;
  errorMessage?: string;
}

const GLUE_STATE: Record<SimOutcome, Pick<GlueJobStateChangeDetail, 'state' | 'severity'> & { message: string }> = {
  succeeded: { state: 'SUCCEEDED', severity: 'INFO', message: 'Job run succeeded' },
  failed: { state: 'FAILED', severity: 'ERROR', message: 'An error occurred while running the job.' },
  timeout: { state: 'TIMEOUT', severity: 'WARN', message: 'Job run timed out' },
  stopped: { state: 'STOPPED', severity: 'INFO', message: 'Job run stopped' },
};

export function glueJobStateChangeEvent(ctx: EventContext, run: GlueRunFacts): GlueJobStateChangeEvent {
  const { state, severity, message } = GLUE_STATE[run.outcome];
  return {
    version: '0',
    id: randomUUID(),
    'detail-type': GLUE_DETAIL_TYPE,
    source: GLUE_SOURCE,
    account: ctx.account,
    time: eventTime(run.endedAt),
    region: ctx.region,
    resources: [],
    detail: {
      jobName: run.jobName,
      severity,
      state,
      jobRunId: run.jobRunId,
      message: run.outcome === 'failed' && run.errorMessage ? run.errorMessage : message,
    },
  };
}
