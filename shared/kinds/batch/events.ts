import * as z from 'zod';
import { type RunCompletion, RunOutcome } from '../../domain/job';
import { eventOf, parseEventOrThrow, RunId } from '../eventSchemas';
import type { EventRule, IgnoredEvent, KindEvents } from '../kindDefinition';
import { NAME_PREFIX } from '../runNames';
import { BATCH_KIND } from './spec';

export const BATCH_STATE_CHANGE = { source: 'aws.batch', detailType: 'Batch Job State Change' } as const;
/** The statuses that end a job. SUBMITTED is never sent (no event for the submission); the others are on the way. */
export const BATCH_TERMINAL_STATUSES = ['SUCCEEDED', 'FAILED'] as const;

/**
 * Terminal states of jobs Sluice submitted (their names start with `sluice`): the account's other jobs never invoke
 * the releaser. Batch delivers these events at least once.
 */
const rules: readonly EventRule[] = [
  {
    source: [BATCH_STATE_CHANGE.source],
    'detail-type': [BATCH_STATE_CHANGE.detailType],
    detail: { status: [...BATCH_TERMINAL_STATUSES], jobName: [{ prefix: NAME_PREFIX }] },
  },
];

const JobStateChangeEvent = eventOf(BATCH_STATE_CHANGE.source, BATCH_STATE_CHANGE.detailType, {
  jobId: RunId,
  jobName: z.string().min(1),
  jobQueue: z.string().nullish(),
  status: z.string().min(1),
  statusReason: z.string().nullish(),
});

/** Children of array jobs (`<id>:<index>`) and nodes of multi-node jobs (`<id>#<node>`): never a job Sluice submitted. */
const CHILD_JOB = /[:#]/;

function parse(event: unknown): RunCompletion<string> | IgnoredEvent {
  const { detail } = parseEventOrThrow(JobStateChangeEvent, event, 'Batch');
  if (!detail.jobName.startsWith(NAME_PREFIX) || CHILD_JOB.test(detail.jobId)) {
    return { ignored: `Batch job ${detail.jobName} (${detail.jobId}) was not submitted by Sluice` };
  }
  if (!(BATCH_TERMINAL_STATUSES as readonly string[]).includes(detail.status)) {
    return { ignored: `Batch status ${detail.status} does not end a job` };
  }
  return {
    kind: BATCH_KIND,
    executionId: detail.jobId,
    name: detail.jobName,
    outcome: detail.status === 'SUCCEEDED' ? RunOutcome.Succeeded : RunOutcome.Failed,
    detail: detail.statusReason ? `${detail.status}: ${detail.statusReason.slice(0, 200)}` : detail.status,
  };
}

export const batchEvents: KindEvents = { rules, parse };
