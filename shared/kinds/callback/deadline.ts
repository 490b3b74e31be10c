import type { RunDeadline, RunTimes } from '../kindDefinition';
import type { CallbackJob } from './spec';

/**
 * When a callback run is over without a report: `timeoutSeconds` after its start, or `heartbeatSeconds` after its last
 * heartbeat (or its start, before the first), whichever comes first. Pure: the reconciler compares it with its clock.
 */
export function callbackDeadline(spec: Pick<CallbackJob, 'timeoutSeconds' | 'heartbeatSeconds'>, run: RunTimes): RunDeadline {
  const timeout: RunDeadline = {
    at: run.startedAt + spec.timeoutSeconds * 1000,
    reason: `timed out: no report within its timeout of ${spec.timeoutSeconds} s`,
  };
  if (spec.heartbeatSeconds === undefined) return timeout;
  const lastSign = Math.max(run.startedAt, run.heartbeatAt ?? run.startedAt);
  const silence: RunDeadline = {
    at: lastSign + spec.heartbeatSeconds * 1000,
    reason: `timed out: no heartbeat for ${spec.heartbeatSeconds} s${run.heartbeatAt === undefined ? ' (none since its start)' : ''}`,
  };
  return silence.at < timeout.at ? silence : timeout;
}
