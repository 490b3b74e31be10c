import type { RunCompletion, RunOutcome } from '../../../shared/domain/job';
import { PermanentStartError, TransientStartError } from '../../../shared/errors';
import type { Clock } from '../../../shared/ports/clock';
import { type JobStarter, RunStatus } from '../../../shared/ports/jobStarter';
import { tick } from './tick';
import type { JobKind, JobSpec } from '../../../shared/kinds/registry';

export interface FakeRun {
  executionId: string;
  jobId: string;
  pool: string;
  spec: JobSpec;
  status: RunStatus;
  startedAt: number;
}

export interface StartCall {
  jobId: string;
  mayHaveStarted: boolean;
  /** what the call did: started a run, returned an earlier one, or threw */
  result: 'started' | 'existing' | 'transient' | 'permanent' | 'error' | 'lost';
  executionId?: string;
}

export interface FakeStarterOptions {
  /**
   * AppFlow-like: every start of a job returns the run an earlier start of it made (AppFlow's client token derived
   * from the job id). Without it the starter is Glue-like: it looks for an earlier run only when told the job
   * `mayHaveStarted` (GlueStarter searches recent runs for the job id argument), otherwise it starts a new run.
   */
  idempotent?: boolean;
  clock?: Clock;
  /**
   * Injected failures are used only by starts that are not told `mayHaveStarted` (a resumed start passes through).
   * For models that must steer clear of the known resume bug (see test/unit/app/acquirer.test.ts).
   */
  failFreshStartsOnly?: boolean;
  /**
   * A stop only asks: the run goes on (reported in progress, as Glue's STOPPING or an ECS task draining) until
   * `confirmStops()` ends it. AWS's stop calls are asynchronous (Glue BatchStopJobRun: "the job run moves to STOPPING";
   * https://docs.aws.amazon.com/glue/latest/webapi/API_BatchStopJobRun.html; ECS StopTask: the task goes through
   * DEACTIVATING and STOPPING before STOPPED, https://docs.aws.amazon.com/AmazonECS/latest/APIReference/API_StopTask.html).
   * Without it a stop ends the run at once (its event in the outbox).
   */
  asyncStops?: boolean;
  /**
   * The kind knows a job's run id before the start (a callback job's, made from the job id): runs are named
   * `<kind>-run-of-<job id>` and the starter has `runIdOf`.
   */
  runIdBeforeStart?: boolean;
}

type Failure =
  | { kind: 'transient' | 'permanent'; code: string }
  | { kind: 'error'; error: Error }
  /** the run is started, then the answer is lost (a network failure, a 5xx after the work was done) */
  | { kind: 'lost'; code: string };

/**
 * A JobStarter for one kind that starts nothing real: it records every start, hands out execution ids
 * (`<kind>-run-<n>`), keeps a settable status per run, and can be told to fail the next starts.
 * Runs that end (finish, stop) put their completion in `outbox`, like the service's EventBridge event.
 */
export class FakeStarter implements JobStarter {
  readonly runs = new Map<string, FakeRun>();
  readonly startCalls: StartCall[] = [];
  readonly stops: string[] = [];
  readonly statusCalls: string[] = [];
  /** runs asked to stop whose stop has not taken effect yet (asyncStops) */
  readonly stopping = new Set<string>();
  /** runs the API no longer knows (their flow or job deleted, or dropped from its history): status answers Gone */
  readonly forgotten = new Set<string>();
  /** Present only for a starter made with `runIdBeforeStart` (JobStarter.runIdOf). */
  readonly runIdOf?: (job: JobSpec) => Promise<string>;
  outbox: RunCompletion[] = [];
  /** Runs inside every start call, before it decides anything: lets a test make something happen "meanwhile". */
  onStart: ((job: JobSpec) => Promise<void>) | undefined;
  private failures: Failure[] = [];
  private counter = 0;

  constructor(
    readonly kind: JobKind,
    private readonly options: FakeStarterOptions = {},
  ) {
    if (options.runIdBeforeStart) this.runIdOf = async (job) => this.knownRunId(job.id);
  }

  private knownRunId(jobId: string): string {
    return `${this.kind}-run-of-${jobId}`;
  }

  async start(job: JobSpec, options: { mayHaveStarted?: boolean; replacesRun?: string } = {}): Promise<{ executionId: string }> {
    await tick();
    if (this.onStart) await this.onStart(job);
    const mayHaveStarted = options.mayHaveStarted ?? false;
    const failure = mayHaveStarted && this.options.failFreshStartsOnly ? undefined : this.failures.shift();
    if (failure?.kind === 'lost') {
      const run = this.startRun(job, mayHaveStarted, options.replacesRun);
      this.startCalls.push({ jobId: job.id, mayHaveStarted, result: 'lost', executionId: run.executionId });
      throw new TransientStartError(`start of ${job.id}: ${failure.code} (fake: the run started, its answer was lost)`, failure.code, {
        definite: false,
      });
    }
    if (failure) {
      this.startCalls.push({ jobId: job.id, mayHaveStarted, result: failure.kind });
      if (failure.kind === 'error') throw failure.error;
      if (failure.kind === 'transient') throw new TransientStartError(`start of ${job.id} throttled (fake)`, failure.code);
      throw new PermanentStartError(`start of ${job.id} rejected (fake)`, failure.code);
    }
    const run = this.startRun(job, mayHaveStarted, options.replacesRun);
    return { executionId: run.executionId };
  }

  /**
   * What a successful start does: returns the job's earlier run when the API would find it, else creates one. A start
   * that replaces a run (StartOptions.replacesRun: ECS's token made anew) finds only runs started after that one.
   */
  private startRun(job: JobSpec, mayHaveStarted: boolean, replacesRun?: string): FakeRun {
    if (this.options.idempotent || mayHaveStarted) {
      const runs = this.runsOf(job.id);
      const replaced = replacesRun === undefined ? -1 : runs.findIndex((run) => run.executionId === replacesRun);
      const earlier = replaced < 0 ? runs[0] : runs[replaced + 1];
      if (earlier) {
        this.startCalls.push({ jobId: job.id, mayHaveStarted, result: 'existing', executionId: earlier.executionId });
        return earlier;
      }
    }
    const executionId = this.options.runIdBeforeStart ? this.knownRunId(job.id) : `${this.kind}-run-${++this.counter}`;
    const run: FakeRun = {
      executionId,
      jobId: job.id,
      pool: job.pool,
      spec: structuredClone(job),
      status: RunStatus.InProgress,
      startedAt: this.options.clock?.now() ?? 0,
    };
    this.runs.set(executionId, run);
    this.startCalls.push({ jobId: job.id, mayHaveStarted, result: 'started', executionId });
    return run;
  }

  async status(_job: JobSpec, executionId: string): Promise<RunStatus> {
    await tick();
    this.statusCalls.push(executionId);
    if (this.forgotten.has(executionId)) return RunStatus.Gone;
    return this.runs.get(executionId)?.status ?? RunStatus.Unknown;
  }

  async stop(_job: JobSpec, executionId: string): Promise<void> {
    await tick();
    this.stops.push(executionId);
    const run = this.runs.get(executionId);
    if (!run || run.status !== RunStatus.InProgress) return;
    if (this.options.asyncStops) this.stopping.add(executionId);
    else this.end(run, 'failed', 'STOPPED');
  }

  /** The stops asked for take effect (asyncStops): each run stopping ends failed, its event in the outbox. */
  confirmStops(): RunCompletion[] {
    const ended = [...this.stopping].flatMap((id) => {
      const run = this.runs.get(id);
      return run && run.status === RunStatus.InProgress ? [this.end(run, 'failed', 'STOPPED')] : [];
    });
    this.stopping.clear();
    return ended;
  }

  /** The API no longer knows the run (its flow or job deleted, or the run dropped from its history): status answers Gone. */
  forgetRun(executionId: string): void {
    if (!this.runs.has(executionId)) throw new Error(`no run ${executionId}`);
    this.forgotten.add(executionId);
  }

  /**
   * The next `count` starts create their run (or find the earlier one, as a normal start would), then throw a
   * TransientStartError that is not definite: the answer was lost or was a 5xx.
   */
  loseNextStartAnswers(count: number, code = 'InternalServiceException'): void {
    for (let i = 0; i < count; i++) this.failures.push({ kind: 'lost', code });
  }

  /** The next `count` starts throw TransientStartError (or PermanentStartError) with this code. */
  failNextStarts(
    count: number,
    kind: 'transient' | 'permanent' = 'transient',
    code = kind === 'transient' ? 'ThrottlingException' : 'ValidationException',
  ): void {
    for (let i = 0; i < count; i++) this.failures.push({ kind, code });
  }

  /** Forgets failures asked for and not used yet. */
  clearFailures(): void {
    this.failures = [];
  }

  /** The next start throws this error as is (an unexpected failure, e.g. a network error the adapter did not map). */
  failNextStartWith(error: Error): void {
    this.failures.push({ kind: 'error', error });
  }

  setStatus(executionId: string, status: RunStatus): void {
    const run = this.runs.get(executionId);
    if (!run) throw new Error(`no run ${executionId}`);
    run.status = status;
  }

  /** Ends a run in progress: sets its status and returns (and puts in the outbox) its completion event. */
  finish(executionId: string, outcome: RunOutcome): RunCompletion {
    const run = this.runs.get(executionId);
    if (!run) throw new Error(`no run ${executionId}`);
    if (run.status !== RunStatus.InProgress) throw new Error(`run ${executionId} has ended already`);
    return this.end(run, outcome, outcome === 'succeeded' ? 'SUCCEEDED' : 'FAILED');
  }

  /** The completion event a run would produce (without changing anything). */
  completionOf(executionId: string, outcome: RunOutcome): RunCompletion {
    const run = this.runs.get(executionId);
    return { kind: this.kind, executionId, outcome, name: run?.jobId ?? 'unknown', detail: outcome === 'failed' ? 'FAILED' : undefined };
  }

  takeEvents(): RunCompletion[] {
    const events = this.outbox;
    this.outbox = [];
    return events;
  }

  runsOf(jobId: string): FakeRun[] {
    return [...this.runs.values()].filter((run) => run.jobId === jobId);
  }

  inProgress(pool?: string): FakeRun[] {
    return [...this.runs.values()].filter((run) => run.status === RunStatus.InProgress && (pool === undefined || run.pool === pool));
  }

  /** Execution ids of the runs that were created (not calls that returned an earlier run, not failures). */
  get started(): StartCall[] {
    return this.startCalls.filter((call) => call.result === 'started');
  }

  private end(run: FakeRun, outcome: RunOutcome, detail: string): RunCompletion {
    run.status = outcome === 'succeeded' ? RunStatus.Succeeded : RunStatus.Failed;
    const completion: RunCompletion = { kind: this.kind, executionId: run.executionId, outcome, name: run.jobId, detail };
    this.outbox.push(completion);
    return completion;
  }
}
