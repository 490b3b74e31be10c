import type { JobKind } from '../../shared/kinds/registry';

export type { JobKind };

/** AppFlow `executionStatus` values (DescribeFlowExecutionRecords). */
export const AppFlowExecutionStatus = {
  InProgress: 'InProgress',
  Successful: 'Successful',
  Error: 'Error',
  CancelStarted: 'CancelStarted',
  Canceled: 'Canceled',
} as const;
export type AppFlowExecutionStatus = (typeof AppFlowExecutionStatus)[keyof typeof AppFlowExecutionStatus];

/** Glue `JobRunState` values the simulator uses (no STARTING, WAITING or ERROR). */
export const GlueJobRunState = {
  Running: 'RUNNING',
  Stopping: 'STOPPING',
  Stopped: 'STOPPED',
  Succeeded: 'SUCCEEDED',
  Failed: 'FAILED',
  Timeout: 'TIMEOUT',
} as const;
export type GlueJobRunState = (typeof GlueJobRunState)[keyof typeof GlueJobRunState];

/** How a started run is planned to end (options.outcome). AppFlow has no timeout state: `timeout` ends as Error there. */
export const PlannedOutcome = { Succeeded: 'succeeded', Failed: 'failed', TimedOut: 'timeout' } as const;
export type PlannedOutcome = (typeof PlannedOutcome)[keyof typeof PlannedOutcome];

/** How a run did end: the planned outcome, or `stopped` (BatchStopJobRun / CancelFlowExecutions). */
export const SimOutcome = { ...PlannedOutcome, Stopped: 'stopped' } as const;
export type SimOutcome = (typeof SimOutcome)[keyof typeof SimOutcome];

export type RunArgs = Readonly<Record<string, string>>;

/** Per-run decision functions get the job kind, the flow / job / state machine name and the run's arguments (Glue Arguments; `{}` for AppFlow). */
export type PerRun<T> = T | ((kind: JobKind, name: string, args: RunArgs) => T);

/** One run, as recorded. Timestamps come from options.now (ms). */
export interface SimRun {
  kind: JobKind;
  name: string;
  executionId: string;
  args: RunArgs;
  /** AppFlow clientToken of the start call that created the run. */
  clientToken?: string;
  /** options.group(kind, name, args), when given. */
  group?: string;
  /** When the start request arrived (before startLatencyMs). */
  startCallAt: number;
  /** When the run began (the moment it counts as in progress). */
  startedAt: number;
  endedAt?: number;
  outcome?: SimOutcome;
  /** The status the service's own API reports now (AppFlowExecutionStatus, GlueJobRunState, ...). */
  status: string;
  /** Global order of the start and end changes: breaks ties between equal timestamps. */
  startSeq: number;
  endSeq?: number;
}

/** One start call (StartFlow / StartJobRun), successful or not. */
export interface SimStartCall {
  kind: JobKind;
  name: string;
  /** When the request arrived. */
  at: number;
  /** When the simulator answered. */
  respondedAt: number;
  ok: boolean;
  /** The run the call created or found; on a failed call, the run it created all the same (failStartsAfterStarting). */
  executionId?: string;
  /** Error name sent to the SDK, e.g. `ThrottlingException`. */
  error?: string;
  clientToken?: string;
  /** True when an AppFlow clientToken matched an earlier start: no new run. */
  idempotentReplay?: boolean;
}

/** The EventBridge envelope, as AWS delivers it to a rule target. */
export interface EventBridgeEvent<TDetailType extends string = string, TDetail = unknown> {
  version: '0';
  id: string;
  'detail-type': TDetailType;
  source: string;
  account: string;
  time: string;
  region: string;
  resources: string[];
  detail: TDetail;
}

export interface SimEmittedEvent {
  at: number;
  kind: JobKind;
  executionId: string;
  event: EventBridgeEvent;
  /** The second delivery of a duplicated event (same event id). */
  duplicate: boolean;
  /** Set when options.emit threw or its promise rejected. */
  emitError?: string;
}

export interface SimDroppedEvent {
  at: number;
  kind: JobKind;
  executionId: string;
  event: EventBridgeEvent;
}

export interface ConcurrencyPoint {
  t: number;
  inProgress: number;
}

/** Errors the simulator can answer a start call with. Any other string is sent as is (the SDK then makes a generic service exception). */
export type SimErrorName =
  | 'ThrottlingException'
  | 'ResourceNotFoundException'
  | 'AccessDeniedException'
  | 'ValidationException'
  | 'ServiceQuotaExceededException'
  | 'ConflictException'
  | 'InternalServerException'
  | 'ConcurrentRunsExceededException'
  | 'EntityNotFoundException'
  | 'InvalidInputException'
  | 'ResourceNumberLimitExceededException'
  | 'OperationTimeoutException'
  | 'InternalServiceException'
  | (string & {});

/** An error to send back through the service's wire protocol. */
export class SimServiceError extends Error {
  constructor(
    readonly errorName: SimErrorName,
    message: string,
    /** The run this failed call created all the same (failStartsAfterStarting). */
    readonly createdExecutionId?: string,
  ) {
    super(message);
    this.name = 'SimServiceError';
  }
}

/**
 * One page of a newest-first run list and the token of the next page, or undefined for a malformed token.
 * The token names the last run returned (its startSeq) instead of an offset, so runs that start while a client pages
 * (a busy job) do not shift the pages under it: no run is listed twice or skipped. Clients treat it as opaque, as
 * AWS's are.
 */
export function pageNewestFirst<T extends { startSeq: number }>(
  newestFirst: readonly T[],
  token: unknown,
  max: number,
): { page: T[]; nextToken?: string } | undefined {
  const after = token === undefined ? Infinity : Number(token);
  if (token !== undefined && (typeof token !== 'string' || !Number.isInteger(after) || after < 0)) return undefined;
  const rest = newestFirst.filter((r) => r.startSeq < after);
  const page = rest.slice(0, max);
  return rest.length > max ? { page, nextToken: String(page[page.length - 1]!.startSeq) } : { page };
}
