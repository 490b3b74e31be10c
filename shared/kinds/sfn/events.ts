import * as z from 'zod';
import { type RunCompletion, RunOutcome } from '../../domain/job';
import { eventOf, parseEventOrThrow, RunId } from '../eventSchemas';
import type { EventRule, IgnoredEvent, KindEvents } from '../kindDefinition';
import { EXECUTION_NAME_PREFIX, SFN_KIND } from './spec';

export const SFN_STATUS_CHANGE = { source: 'aws.states', detailType: 'Step Functions Execution Status Change' } as const;
/** The statuses that end an execution. RUNNING (and PENDING_REDRIVE, for redriven executions) do not. */
export const SFN_TERMINAL_STATUSES = ['SUCCEEDED', 'FAILED', 'TIMED_OUT', 'ABORTED'] as const;

/**
 * Terminal statuses of executions Sluice started (their names start with `sluice`): the account's other executions
 * never invoke the releaser. Express workflows emit no such event (Sluice refuses them, see starter.ts).
 */
const rules: readonly EventRule[] = [
  {
    source: [SFN_STATUS_CHANGE.source],
    'detail-type': [SFN_STATUS_CHANGE.detailType],
    detail: { status: [...SFN_TERMINAL_STATUSES], name: [{ prefix: EXECUTION_NAME_PREFIX }] },
  },
];

const StatusChangeEvent = eventOf(SFN_STATUS_CHANGE.source, SFN_STATUS_CHANGE.detailType, {
  executionArn: RunId,
  stateMachineArn: z.string().min(1),
  name: z.string().min(1),
  status: z.string().min(1),
  error: z.string().nullish(),
  cause: z.string().nullish(),
});

function parse(event: unknown): RunCompletion<string> | IgnoredEvent {
  const { detail } = parseEventOrThrow(StatusChangeEvent, event, 'Step Functions');
  if (!(SFN_TERMINAL_STATUSES as readonly string[]).includes(detail.status)) {
    return { ignored: `Step Functions status ${detail.status} does not end an execution` };
  }
  return {
    kind: SFN_KIND,
    executionId: detail.executionArn,
    name: detail.stateMachineArn,
    outcome: detail.status === 'SUCCEEDED' ? RunOutcome.Succeeded : RunOutcome.Failed,
    detail: detail.error ? `${detail.status}: ${detail.error}${detail.cause ? ` (${detail.cause.slice(0, 200)})` : ''}` : detail.status,
  };
}

export const sfnEvents: KindEvents = { rules, parse };
