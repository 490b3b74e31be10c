import * as z from 'zod';
import { type RunCompletion, RunOutcome } from '../../domain/job';
import { eventOf, parseEventOrThrow, RunId } from '../eventSchemas';
import type { EventRule, IgnoredEvent, KindEvents } from '../kindDefinition';
import { GLUE_KIND } from './spec';

export const GLUE_STATE_CHANGE = { source: 'aws.glue', detailType: 'Glue Job State Change' } as const;
/** The only states Glue emits an event for; ERROR and WAITING produce none (the reconciler asks GetJobRun). */
export const GLUE_TERMINAL_STATES = ['SUCCEEDED', 'FAILED', 'TIMEOUT', 'STOPPED'] as const;

/**
 * Terminal state changes of the Glue jobs Sluice may start only: the event names its job (`jobName`), matched by the
 * stage parameter allowedGlueJobPattern with EventBridge's wildcard filter, so the account's other jobs never invoke
 * the releaser.
 */
const rules: readonly EventRule[] = [
  {
    source: [GLUE_STATE_CHANGE.source],
    'detail-type': [GLUE_STATE_CHANGE.detailType],
    detail: { state: [...GLUE_TERMINAL_STATES], jobName: [{ wildcard: '${param:allowedGlueJobPattern}' }] },
  },
];

const GlueStateChangeEvent = eventOf(GLUE_STATE_CHANGE.source, GLUE_STATE_CHANGE.detailType, {
  jobRunId: RunId,
  jobName: z.string().min(1),
  state: z.string().min(1),
  message: z.string().optional(),
});

function parse(event: unknown): RunCompletion<string> | IgnoredEvent {
  const { detail } = parseEventOrThrow(GlueStateChangeEvent, event, 'Glue');
  if (!(GLUE_TERMINAL_STATES as readonly string[]).includes(detail.state)) {
    return { ignored: `Glue state ${detail.state} does not end a run` };
  }
  return {
    kind: GLUE_KIND,
    executionId: detail.jobRunId,
    name: detail.jobName,
    outcome: detail.state === 'SUCCEEDED' ? RunOutcome.Succeeded : RunOutcome.Failed,
    detail: detail.message ? `${detail.state}: ${detail.message}` : detail.state,
  };
}

export const glueEvents: KindEvents = { rules, parse };
