import { EventBridgeSchema } from '@aws-lambda-powertools/parser/schemas/eventbridge';
import { z } from 'zod';
import { JobKind, type RunCompletion, RunOutcome } from '../../domain/job';
import { InvalidEventError } from '../../errors';

/** The completion events Sluice listens to (source / detail-type), also used for the EventBridge rules. */
export const CompletionEventType = {
  AppFlowEnd: { source: 'aws.appflow', detailType: 'AppFlow End Flow Run Report' },
  GlueStateChange: { source: 'aws.glue', detailType: 'Glue Job State Change' },
} as const;

export const GLUE_TERMINAL_STATES = ['SUCCEEDED', 'FAILED', 'TIMEOUT', 'STOPPED'] as const;
export const APPFLOW_SUCCESS_STATUS = 'Execution Successful';

/**
 * Run ids are short on AWS (AppFlow: a UUID; Glue: "jr_" + 64 hex). A longer one cannot be a run Sluice started, and
 * over 2 KB it would not even fit in a DynamoDB key: refuse it as malformed rather than fail (and retry) the lookup.
 */
export const MAX_RUN_ID_LENGTH = 256;
const RunId = z.string().min(1).max(MAX_RUN_ID_LENGTH);

const AppFlowEndEvent = EventBridgeSchema.extend({
  source: z.literal(CompletionEventType.AppFlowEnd.source),
  'detail-type': z.literal(CompletionEventType.AppFlowEnd.detailType),
  detail: z.looseObject({ 'execution-id': RunId, 'flow-name': z.string().min(1), status: z.string().min(1) }),
});

const GlueStateChangeEvent = EventBridgeSchema.extend({
  source: z.literal(CompletionEventType.GlueStateChange.source),
  'detail-type': z.literal(CompletionEventType.GlueStateChange.detailType),
  detail: z.looseObject({ jobRunId: RunId, jobName: z.string().min(1), state: z.string().min(1), message: z.string().optional() }),
});

/**
 * Reads an EventBridge completion event. Returns undefined for a well-formed event that is not a completion (a Glue
 * state that is not terminal); throws InvalidEventError for anything malformed.
 */
export function parseCompletionEvent(event: unknown): RunCompletion | undefined {
  const source = (event as { source?: unknown } | null)?.source;
  if (source === CompletionEventType.AppFlowEnd.source) {
    const parsed = AppFlowEndEvent.safeParse(event);
    if (!parsed.success) throw invalid('AppFlow', parsed.error);
    const { detail } = parsed.data;
    return {
      kind: JobKind.AppFlow,
      executionId: detail['execution-id'],
      name: detail['flow-name'],
      outcome: detail.status === APPFLOW_SUCCESS_STATUS ? RunOutcome.Succeeded : RunOutcome.Failed,
      detail: detail.status,
    };
  }
  if (source === CompletionEventType.GlueStateChange.source) {
    const parsed = GlueStateChangeEvent.safeParse(event);
    if (!parsed.success) throw invalid('Glue', parsed.error);
    const { detail } = parsed.data;
    if (!(GLUE_TERMINAL_STATES as readonly string[]).includes(detail.state)) return undefined;
    return {
      kind: JobKind.Glue,
      executionId: detail.jobRunId,
      name: detail.jobName,
      outcome: detail.state === 'SUCCEEDED' ? RunOutcome.Succeeded : RunOutcome.Failed,
      detail: detail.message ? `${detail.state}: ${detail.message}` : detail.state,
    };
  }
  throw new InvalidEventError(`not a completion event Sluice knows: source ${JSON.stringify(source)}`);
}

function invalid(what: string, error: z.ZodError): InvalidEventError {
  const issues = error.issues
    .slice(0, 5)
    .map((i) => `${i.path.join('.')}: ${i.message}`)
    .join('; ');
  return new InvalidEventError(`malformed ${what} completion event: ${issues}`, { cause: error });
}
