import type { RunCompletion } from '../../domain/job';
import type { EventRule, IgnoredEvent, KindEvents } from '../kindDefinition';
import { CALLBACK_REPORT, reportOfEvent, ReportType } from './reports';
import { CALLBACK_KIND } from './spec';
import { jobIdInToken } from './token';

/**
 * Reports of the user's systems on the stage's default bus. They go to the `callbacks` function, not the releaser: it
 * checks the token's MAC (with the secret it loads at a cold start) before anything is read or written, and handles
 * heartbeats, which are no completion.
 */
const rules: readonly EventRule[] = [
  { source: [CALLBACK_REPORT.source], 'detail-type': [CALLBACK_REPORT.completed, CALLBACK_REPORT.heartbeat] },
];

/** A report as a completion (its token is the run id), a heartbeat as ignored. The token is not checked here. */
function parse(event: unknown): RunCompletion<string> | IgnoredEvent {
  const report = reportOfEvent(event);
  if (report.type === ReportType.Heartbeat) return { ignored: 'a heartbeat: the run goes on' };
  return {
    kind: CALLBACK_KIND,
    executionId: report.token,
    name: jobIdInToken(report.token) ?? CALLBACK_KIND,
    outcome: report.outcome,
    ...(report.reason !== undefined && { detail: report.reason }),
  };
}

export const CALLBACKS_FUNCTION = 'callbacks';

export const callbackEvents: KindEvents = { rules, parse, subscriber: CALLBACKS_FUNCTION };
