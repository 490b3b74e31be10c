import { type RunCompletion, RunOutcome } from '../domain/job';
import { InvalidEventError } from '../errors';
import { type CallbackReport, reportOfEvent, reportOfMessage, ReportType } from '../kinds/callback/reports';
import { CALLBACK_KIND } from '../kinds/callback/spec';
import { type TokenKeyring, keysToCheck } from '../kinds/callback/secret';
import { checkToken, jobIdInToken, type TokenCheck, TokenVerdict } from '../kinds/callback/token';
import { CompleteRun, type CompletionResult } from './completeRun';
import { MetricName, type SluiceDeps } from './deps';

export const ReportResult = {
  /** a heartbeat noted on the job running that run */
  Beat: 'beat',
  /** a heartbeat of a run its job is not running (not recorded yet, or over, or another run): nothing to do */
  Stale: 'stale',
  /** a token Sluice did not make (or not with the current or previous key): dropped before anything was read or written */
  Forged: 'forged',
  /** a token Sluice made, past its expiry: dropped before anything was read or written */
  Expired: 'expired',
  /** not a report at all: dropped */
  Malformed: 'malformed',
} as const;
export type ReportResult = (typeof ReportResult)[keyof typeof ReportResult] | CompletionResult;

/**
 * The `callbacks` function's service: a callback job's system reports through EventBridge or the callback queue. The
 * token's MAC and expiry are checked first, with no read or write of the table, so a forged or expired token costs none.
 * A token no key checks makes the keyring read the keys again (rate-limited: a rotation may have happened since they
 * were read). A completion then goes the way of any completion event of the token's run (CompleteRun: a replayed token
 * finds its job finished and changes nothing; a token of another run of the job finds no such run); a heartbeat is the
 * ledger's `heartbeat` step, applied only while the job runs that very run. The token itself is never logged nor kept:
 * the run id (a hash of its claims) stands for it.
 */
export class CallbackReports {
  private readonly completeRun: CompleteRun;

  constructor(
    private readonly deps: SluiceDeps,
    private readonly keyring: Pick<TokenKeyring, 'current' | 'reread'>,
  ) {
    this.completeRun = new CompleteRun(deps);
  }

  /** A report event (source sluice.callback). */
  fromEvent(event: unknown): Promise<ReportResult> {
    return this.read(() => reportOfEvent(event), { eventId: (event as { id?: unknown } | null)?.id });
  }

  /** A message of the callback queue. */
  fromMessage(body: string, messageId?: string): Promise<ReportResult> {
    return this.read(() => reportOfMessage(body), { messageId });
  }

  async handle(report: CallbackReport): Promise<ReportResult> {
    const { ledger, clock, log, metrics } = this.deps;
    const check = await this.check(report.token);
    if (check.verdict === TokenVerdict.Forged) {
      // The job id a forger wrote is shown, not trusted: nothing is looked up.
      log.warn('callback report with a token Sluice did not make, dropped', {
        type: report.type,
        claimedJobId: jobIdInToken(report.token),
      });
      metrics.count(MetricName.IgnoredEvents);
      return ReportResult.Forged;
    }
    const { jobId } = check.claims;
    const keys = { jobId, kind: CALLBACK_KIND, executionId: check.runId };
    if (check.verdict === TokenVerdict.Expired) {
      log.warn('callback report with an expired token, dropped: its run is over (its job timed out, or it was sent again later)', {
        ...keys,
        type: report.type,
        expiredAt: new Date(check.claims.expiresAt).toISOString(),
      });
      metrics.count(MetricName.IgnoredEvents);
      return ReportResult.Expired;
    }
    if (report.type === ReportType.Heartbeat) {
      const beat = await ledger.heartbeat(jobId, check.runId, clock.now());
      log.debug(beat ? 'heartbeat noted' : 'heartbeat of a run its job is not running, ignored', keys);
      return beat ? ReportResult.Beat : ReportResult.Stale;
    }
    const completion: RunCompletion = {
      kind: CALLBACK_KIND,
      executionId: check.runId,
      outcome: report.outcome,
      name: jobId,
      ...((report.reason ?? report.outcome === RunOutcome.Failed) && { detail: report.reason ?? 'the system reported a failure' }),
    };
    return this.completeRun.complete(completion);
  }

  /** The token against the keys; if none checks it, against the keys read again (when the keyring allows a read). */
  private async check(token: string): Promise<TokenCheck> {
    const now = this.deps.clock.now();
    const check = checkToken(keysToCheck(await this.keyring.current()), token, now);
    if (check.verdict !== TokenVerdict.Forged) return check;
    const fresh = await this.keyring.reread();
    return fresh ? checkToken(keysToCheck(fresh), token, now) : check;
  }

  private async read(parse: () => CallbackReport, where: Record<string, unknown>): Promise<ReportResult> {
    let report: CallbackReport;
    try {
      report = parse();
    } catch (error) {
      if (!(error instanceof InvalidEventError)) throw error;
      this.deps.log.error('malformed callback report dropped', { reason: error.message, ...where });
      this.deps.metrics.count(MetricName.IgnoredEvents);
      return ReportResult.Malformed;
    }
    return this.handle(report);
  }
}
