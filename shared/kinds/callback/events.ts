import type { RunCompletion } from '../../domain/job';
import type { EventRule, IgnoredEvent, KindEvents } from '../kindDefinition';
import { CALLBACK_REPORT, reportOfEvent, ReportType } from './reports';
import { CALLBACK_KIND } from './spec';
import { jobIdInToken, runIdOfToken } from './token';
import { InvalidEventError } from '../../errors';

/**
 * Reports of the user's systems on the stage's default bus. They go to the `callbacks` function, not the releaser: it
 * checks the token's MAC (with the secret it loads at a cold start) before anything is read or written, and handles
 * heartbeats, which are no completion.
 */
const rules: readonly EventRule[] = [
  { source: [CALLBACK_REPORT.source], 'detail-type': [CALLBACK_REPORT.completed, CALLBACK_REPORT.heartbeat] },
];

/** A report as a completion of its token's run, a heartbeat as ignored. The token's MAC is not checked here. */
function parse(event: unknown): RunCompletion<string> | IgnoredEvent {
  const report = reportOfEvent(event);
  if (report.type === ReportType.Heartbeat) return { ignored: 'a heartbeat: the run goes on' };
  const executionId = runIdOfToken(report.token);
  if (executionId === undefined) throw new InvalidEventError('malformed callback event: its token is not a callback token');
  return {
    kind: CALLBACK_KIND,
    executionId,
    name: jobIdInToken(report.token)!,
    outcome: report.outcome,
    ...(report.reason !== undefined && { detail: report.reason }),
  };
}

export const CALLBACKS_FUNCTION = 'callbacks';

export const callbackEvents: KindEvents = { rules, parse, subscriber: CALLBACKS_FUNCTION };
