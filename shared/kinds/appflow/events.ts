import { type RunCompletion, RunOutcome } from '../../domain/job';
import type { EventRule, IgnoredEvent, KindEvents } from '../kindDefinition';
import { eventOf, parseEventOrThrow, RunId } from '../eventSchemas';
import * as z from 'zod';
import { APPFLOW_KIND } from './spec';

export const APPFLOW_END = { source: 'aws.appflow', detailType: 'AppFlow End Flow Run Report' } as const;
export const APPFLOW_SUCCESS_STATUS = 'Execution Successful';

/**
 * Only the End report (the Start report is left out: a run that started is no news to Sluice), and only of the flows
 * Sluice may start: the report names its flow (`flow-name`), matched by the stage parameter allowedFlowPattern with
 * EventBridge's wildcard filter (`*` any run of characters; local/bus/eventPattern.ts plays it locally), so the
 * account's other flows never invoke the releaser.
 */
const rules: readonly EventRule[] = [
  {
    source: [APPFLOW_END.source],
    'detail-type': [APPFLOW_END.detailType],
    detail: { 'flow-name': [{ wildcard: '${param:allowedFlowPattern}' }] },
  },
];

const AppFlowEndEvent = eventOf(APPFLOW_END.source, APPFLOW_END.detailType, {
  'execution-id': RunId,
  'flow-name': z.string().min(1),
  status: z.string().min(1),
});

/** Every End report ends a run: "Execution Successful" succeeded, any other status failed. */
function parse(event: unknown): RunCompletion<string> | IgnoredEvent {
  const { detail } = parseEventOrThrow(AppFlowEndEvent, event, 'AppFlow');
  return {
    kind: APPFLOW_KIND,
    executionId: detail['execution-id'],
    name: detail['flow-name'],
    outcome: detail.status === APPFLOW_SUCCESS_STATUS ? RunOutcome.Succeeded : RunOutcome.Failed,
    detail: detail.status,
  };
}

export const appflowEvents: KindEvents = { rules, parse };
