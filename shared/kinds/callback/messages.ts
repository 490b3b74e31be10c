import * as z from 'zod';
import type { CallbackJob } from './spec';

/**
 * What Sluice sends to a callback job's target, the same JSON on every channel (an SQS message body, an EventBridge
 * event's detail, a Lambda event). Starts are at least once: a start can be sent again (a retry after an answer was
 * lost, a resumed start), always with the same run id (its token made anew: a later expiry, maybe a rotated key; each
 * is valid): the user's system must treat a second start of a job id it already took as the same work (dedupe by jobId
 * and runId).
 *
 *   {"type":"start","jobId":"order-7","runId":"cbr.…","token":"cb2.…","payload":{…},"timeoutSeconds":3600,
 *    "heartbeatSeconds":300,"callbackQueueUrl":"https://sqs…/sluice-prod-callbacks"}
 *   {"type":"cancel","jobId":"order-7","runId":"cbr.…","reason":"…"}
 *
 * The token is in the start message only: it is what ends the run, so nothing else (a cancel, the ledger, a log)
 * carries it. The run id names the run everywhere (`sluice jobs`, a cancel) and ends nothing.
 */
export const StartMessageType = { Start: 'start', Cancel: 'cancel' } as const;

export const START_SOURCE = 'sluice';
/** The start event's default detail type (a target's `detailType` replaces it) and the cancel event's. */
export const START_DETAIL_TYPE = 'Sluice Callback Start';
export const CANCEL_DETAIL_TYPE = 'Sluice Callback Cancel';

export const StartMessageSchema = z.object({
  type: z.literal(StartMessageType.Start),
  jobId: z.string().min(1),
  /** The run (as `sluice jobs` shows it): the same in every start of one run and in its cancel. */
  runId: z.string().min(1),
  /** What the system reports with; it ends the run, so keep it as a credential. */
  token: z.string().min(1),
  payload: z.json().optional(),
  timeoutSeconds: z.number().int().positive(),
  heartbeatSeconds: z.number().int().positive().optional(),
  /** Where to report by SQS (the stage's callback queue), when the functions know it. */
  callbackQueueUrl: z.string().optional(),
});
export type StartMessage = z.infer<typeof StartMessageSchema>;

export const CancelMessageSchema = z.object({
  type: z.literal(StartMessageType.Cancel),
  jobId: z.string().min(1),
  runId: z.string().min(1),
  reason: z.string(),
});
export type CancelMessage = z.infer<typeof CancelMessageSchema>;

export const TargetMessageSchema = z.discriminatedUnion('type', [StartMessageSchema, CancelMessageSchema]);
export type TargetMessage = z.infer<typeof TargetMessageSchema>;

export function startMessage(spec: CallbackJob, run: { runId: string; token: string }, callbackQueueUrl?: string): StartMessage {
  return {
    type: StartMessageType.Start,
    jobId: spec.id,
    runId: run.runId,
    token: run.token,
    ...(spec.payload !== undefined && { payload: spec.payload }),
    timeoutSeconds: spec.timeoutSeconds,
    ...(spec.heartbeatSeconds !== undefined && { heartbeatSeconds: spec.heartbeatSeconds }),
    ...(callbackQueueUrl && { callbackQueueUrl }),
  };
}

export function cancelMessage(spec: CallbackJob, runId: string, reason: string): CancelMessage {
  return { type: StartMessageType.Cancel, jobId: spec.id, runId, reason };
}
