import * as z from 'zod';
import { RunOutcome } from '../../domain/job';
import { InvalidEventError } from '../../errors';
import { eventOf, invalidEvent, RunId } from '../eventSchemas';

/**
 * What the user's system sends back with a callback job's token: its end (`outcome`, with a `reason` when it failed)
 * or a heartbeat (the run is alive: its heartbeat deadline starts again). Two channels, the same fields:
 *
 * - an EventBridge event on the stage's default bus: source `sluice.callback`, detail type `Sluice Callback Completed`
 *   (detail `{"token", "outcome": "succeeded" | "failed", "reason"?}`) or `Sluice Callback Heartbeat` (detail `{"token"}`);
 * - a message to the stage's callback queue: `{"token", "outcome", "reason"?}` or `{"token", "heartbeat": true}`
 *   (`sluice complete TOKEN [--failed REASON]` and `sluice heartbeat TOKEN` send these).
 */
export const CALLBACK_REPORT = {
  source: 'sluice.callback',
  completed: 'Sluice Callback Completed',
  heartbeat: 'Sluice Callback Heartbeat',
} as const;

/** A failure's reason is kept on the job (`lastError`): at most this long. */
export const MAX_REASON_LENGTH = 1024;

export const ReportType = { Completed: 'completed', Heartbeat: 'heartbeat' } as const;

export type CallbackReport =
  | { type: typeof ReportType.Completed; token: string; outcome: RunOutcome; reason?: string }
  | { type: typeof ReportType.Heartbeat; token: string };

const Outcome = z.enum([RunOutcome.Succeeded, RunOutcome.Failed]);
const Reason = z.string().max(MAX_REASON_LENGTH);

const CompletedDetail = { token: RunId, outcome: Outcome, reason: Reason.optional() };
export const CompletedEvent = eventOf(CALLBACK_REPORT.source, CALLBACK_REPORT.completed, CompletedDetail);
export const HeartbeatEvent = eventOf(CALLBACK_REPORT.source, CALLBACK_REPORT.heartbeat, { token: RunId });

const CompletedMessage = z.object(CompletedDetail).strict();
const HeartbeatMessage = z.object({ token: RunId, heartbeat: z.literal(true) }).strict();

/** A report event (either detail type). Throws InvalidEventError for anything else. */
export function reportOfEvent(event: unknown): CallbackReport {
  const detailType = (event as { 'detail-type'?: unknown } | null)?.['detail-type'];
  if (detailType === CALLBACK_REPORT.heartbeat) {
    const parsed = HeartbeatEvent.safeParse(event);
    if (!parsed.success) throw invalidEvent('callback heartbeat', parsed.error);
    return { type: ReportType.Heartbeat, token: parsed.data.detail.token };
  }
  const parsed = CompletedEvent.safeParse(event);
  if (!parsed.success) throw invalidEvent('callback', parsed.error);
  const { token, outcome, reason } = parsed.data.detail;
  return { type: ReportType.Completed, token, outcome, ...(reason !== undefined && { reason }) };
}

/** A report message body (JSON). Throws InvalidEventError for anything else. */
export function reportOfMessage(body: string): CallbackReport {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    throw new InvalidEventError(`malformed callback report: not JSON: ${body.slice(0, 80)}`);
  }
  if (value !== null && typeof value === 'object' && 'heartbeat' in value) {
    const parsed = HeartbeatMessage.safeParse(value);
    if (!parsed.success) throw invalidEvent('callback heartbeat', parsed.error);
    return { type: ReportType.Heartbeat, token: parsed.data.token };
  }
  const parsed = CompletedMessage.safeParse(value);
  if (!parsed.success) throw invalidEvent('callback', parsed.error);
  const { token, outcome, reason } = parsed.data;
  return { type: ReportType.Completed, token, outcome, ...(reason !== undefined && { reason }) };
}

/** The message body of a report (what `sluice complete` and `sluice heartbeat` send). */
export function reportMessage(report: CallbackReport): string {
  if (report.type === ReportType.Heartbeat) return JSON.stringify({ token: report.token, heartbeat: true });
  return JSON.stringify({ token: report.token, outcome: report.outcome, ...(report.reason !== undefined && { reason: report.reason }) });
}
