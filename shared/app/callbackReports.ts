import { type RunCompletion, RunOutcome } from '../domain/job';
import { InvalidEventError } from '../errors';
import { type CallbackReport, reportOfEvent, reportOfMessage, ReportType } from '../kinds/callback/reports';
import { CALLBACK_KIND } from '../kinds/callback/spec';
import { jobIdInToken, verifyToken } from '../kinds/callback/token';
import { CompleteRun, type CompletionResult } from './completeRun';
import { MetricName, type SluiceDeps } from './deps';

export const ReportResult = {
  /** a heartbeat noted on the job running that run */
  Beat: 'beat',
  /** a heartbeat of a run its job is not running (not recorded yet, or over): nothing to do */
  Stale: 'stale',
  /** a token Sluice did not make (or not with this secret): dropped before anything was read or written */
  Forged: 'forged',
  /** not a report at all: dropped */
  Malformed: 'malformed',
} as const;
export type ReportResult = (typeof ReportResult)[keyof typeof ReportResult] | CompletionResult;

/**
 * The `callbacks` function's service: a callback job's system reports through EventBridge or the callback queue. The
 * token's MAC is checked first, with no I/O, so a forged token costs no read and no write. A completion then goes the
 * way of any completion event (CompleteRun: a replayed token finds its job finished and changes nothing); a heartbeat
 * is the ledger's `heartbeat` step, applied only while the job runs that very run.
 */
export class CallbackReports {
  private readonly completeRun: CompleteRun;

  constructor(
    private readonly deps: SluiceDeps,
    private readonly secret: string,
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
    const jobId = verifyToken(this.secret, report.token);
    if (jobId === undefined) {
      // The job id a forger wrote is shown, not trusted: nothing is looked up.
      log.warn('callback report with a token Sluice did not make, dropped', {
        type: report.type,
        claimedJobId: jobIdInToken(report.token),
      });
      metrics.count(MetricName.IgnoredEvents);
      return ReportResult.Forged;
    }
    const keys = { jobId, kind: CALLBACK_KIND, executionId: report.token };
    if (report.type === ReportType.Heartbeat) {
      const beat = await ledger.heartbeat(jobId, report.token, clock.now());
      log.debug(beat ? 'heartbeat noted' : 'heartbeat of a run its job is not running, ignored', keys);
      return beat ? ReportResult.Beat : ReportResult.Stale;
    }
    const completion: RunCompletion = {
      kind: CALLBACK_KIND,
      executionId: report.token,
      outcome: report.outcome,
      name: jobId,
      ...((report.reason ?? report.outcome === RunOutcome.Failed) && { detail: report.reason ?? 'the system reported a failure' }),
    };
    return this.completeRun.complete(completion);
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
