import * as z from 'zod';
import type { RunCompletion } from '../../domain/job';
import { eventOf, parseEventOrThrow, RunId } from '../eventSchemas';
import type { EventRule, IgnoredEvent, KindEvents } from '../kindDefinition';
import { NAME_PREFIX } from '../runNames';
import { ECS_KIND } from './spec';
import { STOPPED, taskOutcome } from './taskOutcome';

export const ECS_TASK_STATE_CHANGE = { source: 'aws.ecs', detailType: 'ECS Task State Change' } as const;

/**
 * Stopped tasks Sluice started (their startedBy begins with `sluice`): the account's other tasks, service tasks among
 * them, never invoke the releaser. ECS delivers these events at least once and may send a STOPPED task's event more
 * than once (detail.version orders them): the releaser ends a run once.
 */
const rules: readonly EventRule[] = [
  {
    source: [ECS_TASK_STATE_CHANGE.source],
    'detail-type': [ECS_TASK_STATE_CHANGE.detailType],
    detail: { lastStatus: [STOPPED], startedBy: [{ prefix: NAME_PREFIX }] },
  },
];

const Container = z.looseObject({
  name: z.string().nullish(),
  exitCode: z.number().int().nullish(),
  reason: z.string().nullish(),
});

const TaskStateChangeEvent = eventOf(ECS_TASK_STATE_CHANGE.source, ECS_TASK_STATE_CHANGE.detailType, {
  taskArn: RunId,
  taskDefinitionArn: z.string().min(1),
  lastStatus: z.string().min(1),
  startedBy: z.string().nullish(),
  stopCode: z.string().nullish(),
  stoppedReason: z.string().nullish(),
  containers: z.array(Container).nullish(),
});

function parse(event: unknown): RunCompletion<string> | IgnoredEvent {
  const { detail } = parseEventOrThrow(TaskStateChangeEvent, event, 'ECS');
  if (!detail.startedBy?.startsWith(NAME_PREFIX)) {
    return { ignored: `ECS task ${detail.taskArn} was not started by Sluice (startedBy ${JSON.stringify(detail.startedBy ?? null)})` };
  }
  const ended = taskOutcome(detail);
  if (!ended) return { ignored: `ECS task status ${detail.lastStatus} does not end a task` };
  return { kind: ECS_KIND, executionId: detail.taskArn, name: detail.taskDefinitionArn, outcome: ended.outcome, detail: ended.detail };
}

export const ecsEvents: KindEvents = { rules, parse };
