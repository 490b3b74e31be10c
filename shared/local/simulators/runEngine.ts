import { randomBytes, randomUUID } from 'node:crypto';
import { JobKind } from '../../domain/job';
import { appflowEndFlowRunEvent, glueJobStateChangeEvent, type EventContext } from './events';
import { Faults, type FaultPatch } from './faults';
import {
  AppFlowExecutionStatus,
  GlueJobRunState,
  SimServiceError,
  type EventBridgeEvent,
  type PerRun,
  type PlannedOutcome,
  type RunArgs,
  type SimOutcome,
  type SimRun,
} from './model';
import { RunBook } from './runBook';

/** What can change while the simulator runs (see `configure`). */
export interface RunBehaviour {
  /** How long a run lasts, in ms (default 1000). */
  durationMs: PerRun<number>;
  /** How a run ends unless stopped (default `succeeded`). */
  outcome: PerRun<PlannedOutcome>;
  /** Glue MaxConcurrentRuns per job name; a job not listed has no limit (real Glue defaults to 1). */
  glueMaxConcurrentRuns: Readonly<Record<string, number>>;
  /** Time a stop request spends in CancelStarted / STOPPING (still in progress) before the run ends (default 0: at once). */
  stopDelayMs: number;
}

export interface RunEngineOptions extends Partial<RunBehaviour> {
  /** Event envelope `account` (default 123456789012) and `region` (default us-east-1). */
  account?: string;
  region?: string;
  /** Called with each completion event as AWS would put it on the default bus. A rejected promise is recorded, never thrown. */
  emit?: (event: EventBridgeEvent) => void | Promise<void>;
  onEmitError?: (error: unknown, event: EventBridgeEvent) => void;
  /** Labels each run (e.g. with its pool) so maxObservedConcurrency(group) can be asked per label. */
  group?: (kind: JobKind, name: string, args: RunArgs) => string;
  /** When given, starts of other names fail (AppFlow ResourceNotFoundException, Glue EntityNotFoundException). Default: every name exists. */
  knownNames?: { appflow?: readonly string[]; glue?: readonly string[] };
  /** AppFlow clientToken idempotency window (default 8 hours). */
  idempotencyWindowMs?: number;
  /** Clock for every recorded timestamp and API time (ms since the epoch; default Date.now). */
  now?: () => number;
  /** Faults active from the start. */
  faults?: FaultPatch;
}

const HOURS_8 = 8 * 60 * 60 * 1000;
const FLOW_NAME = /^[a-zA-Z0-9][\w!@#.-]{0,255}$/;
const pick = <T>(v: PerRun<T>, kind: JobKind, name: string, args: RunArgs): T =>
  typeof v === 'function' ? (v as (k: JobKind, n: string, a: RunArgs) => T)(kind, name, args) : v;

export function statusOf(kind: JobKind, phase: 'running' | 'stopping' | 'ended', outcome?: SimOutcome): SimRun['status'] {
  if (kind === JobKind.AppFlow) {
    if (phase === 'running') return AppFlowExecutionStatus.InProgress;
    if (phase === 'stopping') return AppFlowExecutionStatus.CancelStarted;
    return outcome === 'succeeded'
      ? AppFlowExecutionStatus.Successful
      : outcome === 'stopped'
        ? AppFlowExecutionStatus.Canceled
        : AppFlowExecutionStatus.Error;
  }
  if (phase === 'running') return GlueJobRunState.Running;
  if (phase === 'stopping') return GlueJobRunState.Stopping;
  const byOutcome = {
    succeeded: GlueJobRunState.Succeeded,
    failed: GlueJobRunState.Failed,
    timeout: GlueJobRunState.Timeout,
    stopped: GlueJobRunState.Stopped,
  } as const;
  return byOutcome[outcome ?? 'failed'];
}

interface RunState {
  run: SimRun;
  planned: PlannedOutcome;
  timer?: NodeJS.Timeout;
  stopping: boolean;
  errorMessage?: string;
  recordsProcessed: number;
  bytesProcessed: number;
}

export interface StartResult {
  executionId: string;
  idempotentReplay: boolean;
}

/** The runs' life cycle, shared by both protocols: start, timers, stop, end, events, faults and records. */
export class RunEngine {
  readonly book = new RunBook();
  readonly faults = new Faults();
  readonly now: () => number;
  readonly ctx: EventContext;
  private behaviour: RunBehaviour;
  private readonly states = new Map<string, RunState>(); // `${kind}:${executionId}`
  private readonly tokens = new Map<string, { executionId: string; at: number }>(); // `${flowName}\0${clientToken}`
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly deleted: Record<JobKind, Set<string>> = { appflow: new Set(), glue: new Set() };
  private seq = 0;
  private closed = false;

  constructor(private readonly options: RunEngineOptions = {}) {
    this.now = options.now ?? Date.now;
    this.ctx = { account: options.account ?? '123456789012', region: options.region ?? 'us-east-1' };
    this.behaviour = {
      durationMs: options.durationMs ?? 1000,
      outcome: options.outcome ?? 'succeeded',
      glueMaxConcurrentRuns: options.glueMaxConcurrentRuns ?? {},
      stopDelayMs: options.stopDelayMs ?? 0,
    };
    if (options.faults) this.faults.set(options.faults);
  }

  configure(patch: Partial<RunBehaviour>): void {
    this.behaviour = { ...this.behaviour, ...patch };
  }

  /** StartFlow / StartJobRun. Throws SimServiceError; every call is recorded, failed or not. */
  async start(kind: JobKind, name: string, args: RunArgs, clientToken?: string): Promise<StartResult> {
    const at = this.now();
    const record = (r: { executionId?: string; error?: string; idempotentReplay?: boolean }) =>
      this.book.addStartCall({
        kind,
        name,
        at,
        respondedAt: this.now(),
        ok: r.error === undefined,
        ...r,
        ...(clientToken !== undefined ? { clientToken } : {}),
      });
    if (this.closed) throw new SimServiceError('InternalServerException', 'The simulator is closed');
    const latency = this.faults.of(kind).startLatencyMs;
    if (latency > 0) await this.sleep(latency);
    try {
      const result = this.startNow(kind, name, args, clientToken, at);
      record({ executionId: result.executionId, ...(result.idempotentReplay ? { idempotentReplay: true } : {}) });
      return result;
    } catch (e) {
      const created = e instanceof SimServiceError && e.createdExecutionId !== undefined ? { executionId: e.createdExecutionId } : {};
      record({ error: e instanceof SimServiceError ? e.errorName : 'InternalServerException', ...created });
      throw e;
    }
  }

  private startNow(kind: JobKind, name: string, args: RunArgs, clientToken: string | undefined, callAt: number): StartResult {
    const isFlow = kind === JobKind.AppFlow;
    if (isFlow && !FLOW_NAME.test(name)) {
      throw new SimServiceError(
        'ValidationException',
        `1 validation error detected: Value '${name}' at 'flowName' failed to satisfy constraint`,
      );
    }
    if (!isFlow && (name.length === 0 || name.length > 255)) {
      throw new SimServiceError('InvalidInputException', '1 validation error detected: JobName must have length between 1 and 255');
    }
    const fault = this.faults.takeStartFault(kind, name);
    if (fault) throw new SimServiceError(fault.error, fault.message);
    if (!this.isKnown(kind, name)) {
      throw isFlow
        ? new SimServiceError('ResourceNotFoundException', `Flow ${name} does not exist`)
        : new SimServiceError('EntityNotFoundException', `Job ${name} not found`);
    }
    const tokenKey = isFlow && clientToken ? `${name}\0${clientToken}` : undefined;
    if (tokenKey) {
      const seen = this.tokens.get(tokenKey);
      if (seen && callAt - seen.at < (this.options.idempotencyWindowMs ?? HOURS_8))
        return { executionId: seen.executionId, idempotentReplay: true };
    }
    if (!isFlow) {
      const max = this.behaviour.glueMaxConcurrentRuns[name];
      if (max !== undefined && this.activeRuns(kind, name).length >= max) {
        throw new SimServiceError('ConcurrentRunsExceededException', `Concurrent runs exceeded for ${name}`);
      }
    }
    const executionId = isFlow ? randomUUID() : `jr_${randomBytes(32).toString('hex')}`;
    const frozenArgs = Object.freeze({ ...args });
    const group = this.options.group?.(kind, name, frozenArgs);
    const run: SimRun = {
      kind,
      name,
      executionId,
      args: frozenArgs,
      ...(clientToken !== undefined ? { clientToken } : {}),
      ...(group !== undefined ? { group } : {}),
      startCallAt: callAt,
      startedAt: this.now(),
      status: statusOf(kind, 'running'),
      startSeq: this.seq++,
    };
    const planned = pick(this.behaviour.outcome, kind, name, frozenArgs);
    const duration = Math.max(0, pick(this.behaviour.durationMs, kind, name, frozenArgs));
    const state: RunState = {
      run,
      planned,
      stopping: false,
      recordsProcessed: planned === 'succeeded' ? 100 : 0,
      bytesProcessed: planned === 'succeeded' ? 10_240 : 0,
      ...(planned === 'failed'
        ? { errorMessage: 'Simulated failure' }
        : planned === 'timeout'
          ? { errorMessage: 'Job run timed out' }
          : {}),
    };
    this.states.set(`${kind}:${executionId}`, state);
    this.book.addRun(run);
    if (tokenKey) this.tokens.set(tokenKey, { executionId, at: callAt });
    const timer = this.schedule(() => this.finish(state, planned), duration);
    if (timer) state.timer = timer;
    const answer = this.faults.takeAnswerFault(kind, name);
    if (answer) throw new SimServiceError(answer.error, answer.message, executionId);
    return { executionId, idempotentReplay: false };
  }

  /**
   * False when options.knownNames lists the names of this kind and `name` is not one of them, or when the flow / job
   * was deleted (deleteName).
   */
  isKnown(kind: JobKind, name: string): boolean {
    if (this.deleted[kind].has(name)) return false;
    const known = this.options.knownNames?.[kind];
    return !known || known.includes(name);
  }

  /**
   * Deletes a flow / job (DeleteFlow with forceDelete, DeleteJob): from now on its starts and status calls answer
   * ResourceNotFoundException (AppFlow) / EntityNotFoundException (Glue). Runs in progress go on in the record and end
   * on time; their end events are emitted as usual unless a fault (dropEvents) loses them.
   */
  deleteName(kind: JobKind, name: string): void {
    this.deleted[kind].add(name);
  }

  /** Stops runs of one flow / job. No ids: every active run of that name (AppFlow's CancelFlowExecutions without ids). */
  stop(kind: JobKind, name: string, executionIds?: readonly string[]): { stopped: string[]; invalid: string[] } {
    const targets = executionIds ?? this.activeRuns(kind, name).map((s) => s.run.executionId);
    const stopped: string[] = [];
    const invalid: string[] = [];
    for (const id of targets) {
      const state = this.states.get(`${kind}:${id}`);
      if (!state || state.run.name !== name || state.run.endedAt !== undefined || state.stopping) {
        invalid.push(id);
        continue;
      }
      stopped.push(id);
      state.stopping = true;
      state.run.status = statusOf(kind, 'stopping');
      if (state.timer) this.unschedule(state.timer);
      delete state.timer;
      const delay = this.behaviour.stopDelayMs;
      const timer = delay > 0 ? this.schedule(() => this.finish(state, 'stopped'), delay) : undefined;
      if (timer) state.timer = timer;
      else if (delay <= 0) this.finish(state, 'stopped');
    }
    return { stopped, invalid };
  }

  /** The live record of one run (do not mutate), with its result details. */
  find(
    kind: JobKind,
    executionId: string,
  ): (Readonly<SimRun> & { errorMessage?: string; recordsProcessed: number; bytesProcessed: number }) | undefined {
    const s = this.states.get(`${kind}:${executionId}`);
    return (
      s && {
        ...s.run,
        recordsProcessed: s.recordsProcessed,
        bytesProcessed: s.bytesProcessed,
        ...(s.errorMessage ? { errorMessage: s.errorMessage } : {}),
      }
    );
  }

  /** Runs of one flow / job, newest first. */
  list(kind: JobKind, name: string): NonNullable<ReturnType<RunEngine['find']>>[] {
    return [...this.states.values()]
      .filter((s) => s.run.kind === kind && s.run.name === name)
      .sort((a, b) => b.run.startSeq - a.run.startSeq)
      .map((s) => this.find(kind, s.run.executionId)!);
  }

  /**
   * Forgets ended runs, start calls, events, faults and deleted names (every name exists again); runs in progress go
   * on and will end and emit as usual.
   */
  reset(): void {
    this.book.clear();
    this.faults.clear();
    for (const names of Object.values(this.deleted)) names.clear();
    for (const [key, s] of this.states) if (s.run.endedAt !== undefined) this.states.delete(key);
    for (const [key, t] of this.tokens) if (!this.states.has(`${JobKind.AppFlow}:${t.executionId}`)) this.tokens.delete(key);
  }

  /** Clears every pending timer (runs, delayed events, start latency); no event is emitted afterwards. */
  close(): void {
    this.closed = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }

  pendingTimers(): number {
    return this.timers.size;
  }

  private activeRuns(kind: JobKind, name: string): RunState[] {
    return [...this.states.values()].filter((s) => s.run.kind === kind && s.run.name === name && s.run.endedAt === undefined);
  }

  private finish(state: RunState, outcome: SimOutcome): void {
    const { run } = state;
    if (run.endedAt !== undefined) return;
    if (state.timer) this.unschedule(state.timer);
    delete state.timer;
    run.endedAt = this.now();
    run.endSeq = this.seq++;
    run.outcome = outcome;
    run.status = statusOf(run.kind, 'ended', outcome);
    if (outcome === 'stopped') {
      state.recordsProcessed = 0;
      state.bytesProcessed = 0;
    }
    const event =
      run.kind === JobKind.AppFlow
        ? appflowEndFlowRunEvent(this.ctx, {
            flowName: run.name,
            executionId: run.executionId,
            startedAt: run.startedAt,
            endedAt: run.endedAt,
            outcome,
            recordsProcessed: state.recordsProcessed,
            bytesProcessed: state.bytesProcessed,
          })
        : glueJobStateChangeEvent(this.ctx, {
            jobName: run.name,
            jobRunId: run.executionId,
            endedAt: run.endedAt,
            outcome,
            ...(state.errorMessage ? { errorMessage: state.errorMessage } : {}),
          });
    this.deliver(run.kind, run.executionId, event);
  }

  private deliver(kind: JobKind, executionId: string, event: EventBridgeEvent): void {
    const how = this.faults.takeDelivery(kind);
    if (how.drop) {
      this.book.addDropped({ at: this.now(), kind, executionId, event });
      return;
    }
    const send = () => {
      for (let i = 0; i < how.copies; i++) this.emitOne(kind, executionId, event, i > 0);
    };
    if (how.delayMs > 0) this.schedule(send, how.delayMs);
    else send();
  }

  private emitOne(kind: JobKind, executionId: string, event: EventBridgeEvent, duplicate: boolean): void {
    const rec: { at: number; kind: JobKind; executionId: string; event: EventBridgeEvent; duplicate: boolean; emitError?: string } = {
      at: this.now(),
      kind,
      executionId,
      event,
      duplicate,
    };
    this.book.addEmitted(rec);
    const emit = this.options.emit;
    if (!emit) return;
    const failed = (error: unknown) => {
      rec.emitError = error instanceof Error ? error.message : String(error);
      try {
        this.options.onEmitError?.(error, event);
      } catch {
        // a failing error handler must not crash the simulator either
      }
    };
    try {
      const result = emit(structuredClone(event));
      if (result && typeof (result as Promise<void>).then === 'function') (result as Promise<void>).then(undefined, failed);
    } catch (error) {
      failed(error);
    }
  }

  private schedule(fn: () => void, ms: number): NodeJS.Timeout | undefined {
    if (this.closed) return undefined;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      fn();
    }, ms);
    this.timers.add(timer);
    return timer;
  }

  private unschedule(timer: NodeJS.Timeout): void {
    clearTimeout(timer);
    this.timers.delete(timer);
  }

  private sleep(ms: number): Promise<void> {
    // After close() the promise never settles: the server is gone and its sockets are destroyed.
    return new Promise((resolve) => {
      if (!this.closed) this.schedule(resolve, ms);
    });
  }
}
