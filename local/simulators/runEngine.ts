import type { JobKind } from '../../shared/kinds/registry';
import type { EventContext } from './events';
import { Faults, type FaultPatch } from './faults';
import {
  SimServiceError,
  type EventBridgeEvent,
  type PerRun,
  type PlannedOutcome,
  type RunArgs,
  type SimOutcome,
  type SimRun,
} from './model';
import { RunBook } from './runBook';
import type { SimulatedKind } from './simulatedKind';

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
  knownNames?: Partial<Record<JobKind, readonly string[]>>;
  /** AppFlow clientToken idempotency window (default 8 hours). */
  idempotencyWindowMs?: number;
  /** Clock for every recorded timestamp and API time (ms since the epoch; default Date.now). */
  now?: () => number;
  /** Faults active from the start. */
  faults?: FaultPatch;
}

const pick = <T>(v: PerRun<T>, kind: JobKind, name: string, args: RunArgs): T =>
  typeof v === 'function' ? (v as (k: JobKind, n: string, a: RunArgs) => T)(kind, name, args) : v;

interface RunState {
  run: SimRun;
  planned: PlannedOutcome;
  timer?: NodeJS.Timeout;
  /** the next progress event (SimulatedKind.progress) */
  beat?: NodeJS.Timeout;
  stopping: boolean;
  errorMessage?: string;
  recordsProcessed: number;
  bytesProcessed: number;
}

export interface StartResult {
  executionId: string;
  idempotentReplay: boolean;
}

/**
 * The runs' life cycle, shared by every kind's protocol: start, timers, stop, end, events, faults and records. What
 * differs between services (ids, statuses, end events, idempotency) is each kind's SimulatedKind.
 */
export class RunEngine {
  readonly book = new RunBook();
  readonly faults = new Faults();
  readonly now: () => number;
  readonly ctx: EventContext;
  private behaviour: RunBehaviour;
  private readonly kinds: ReadonlyMap<JobKind, SimulatedKind>;
  private readonly states = new Map<string, RunState>(); // `${kind}:${executionId}`
  private readonly tokens = new Map<string, { kind: JobKind; executionId: string; at: number }>(); // `${kind}\0${name}\0${clientToken}`
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly deleted = new Map<JobKind, Set<string>>();
  private seq = 0;
  private closed = false;

  constructor(
    kinds: readonly SimulatedKind[],
    readonly options: RunEngineOptions = {},
  ) {
    this.kinds = new Map(kinds.map((k) => [k.kind, k]));
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

  /** What can change while the simulator runs, as it is now. */
  get settings(): Readonly<RunBehaviour> {
    return this.behaviour;
  }

  simulated(kind: JobKind): SimulatedKind {
    const found = this.kinds.get(kind);
    if (!found) throw new Error(`the simulator has no ${kind} service`);
    return found;
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
    const service = this.simulated(kind);
    const badName = service.checkName(name);
    if (badName) throw badName;
    const fault = this.faults.takeStartFault(kind, name);
    if (fault) throw new SimServiceError(fault.error, fault.message);
    if (!this.isKnown(kind, name)) throw service.notFound(name);
    const tokenKey = service.repeat && clientToken ? `${kind}\0${name}\0${clientToken}` : undefined;
    if (tokenKey) {
      const seen = this.tokens.get(tokenKey);
      const earlier = seen && this.states.get(`${kind}:${seen.executionId}`);
      if (seen && earlier) {
        const answer = service.repeat!(this, { run: earlier.run, at: seen.at }, args, callAt);
        if (answer === 'replay') return { executionId: seen.executionId, idempotentReplay: true };
        if (answer !== 'new') throw answer;
      }
    }
    const refused = service.concurrencyError?.(this, name, this.activeRuns(kind, name).length);
    if (refused) throw refused;
    const frozenArgs = Object.freeze({ ...args });
    const executionId = service.newExecutionId(name, this.ctx, clientToken, frozenArgs);
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
      status: service.status('running'),
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
    if (tokenKey) this.tokens.set(tokenKey, { kind, executionId, at: callAt });
    const timer = this.schedule(() => this.finish(state, planned), duration);
    if (timer) state.timer = timer;
    this.scheduleProgress(state);
    const answer = this.faults.takeAnswerFault(kind, name);
    if (answer) throw new SimServiceError(answer.error, answer.message, executionId);
    return { executionId, idempotentReplay: false };
  }

  /**
   * Answers the operation's next call fault (Faults.takeCallFault), if one applies to `name`, by throwing it as the
   * service's error (each protocol calls this first thing for every operation it serves).
   */
  failCall(kind: JobKind, operation: string, name = ''): void {
    const fault = this.faults.takeCallFault(kind, operation, name);
    if (fault) throw new SimServiceError(fault.error, fault.message);
  }

  /**
   * False when options.knownNames lists the names of this kind and `name` is not one of them, or when the flow / job
   * was deleted (deleteName).
   */
  isKnown(kind: JobKind, name: string): boolean {
    if (this.deleted.get(kind)?.has(name)) return false;
    const known = this.options.knownNames?.[kind];
    return !known || known.includes(name);
  }

  /**
   * Deletes a flow / job (DeleteFlow with forceDelete, DeleteJob): from now on its starts and status calls answer
   * ResourceNotFoundException (AppFlow) / EntityNotFoundException (Glue). Runs in progress go on in the record and end
   * on time; their end events are emitted as usual unless a fault (dropEvents) loses them.
   */
  deleteName(kind: JobKind, name: string): void {
    const names = this.deleted.get(kind) ?? new Set<string>();
    names.add(name);
    this.deleted.set(kind, names);
  }

  /**
   * Sets the status the service's API reports for a run, without ending it or changing when it ends (a state the
   * simulator does not reach by itself: Glue WAITING or ERROR, an ECS task PROVISIONING). False when there is no such run.
   */
  setStatus(kind: JobKind, executionId: string, status: string): boolean {
    const state = this.states.get(`${kind}:${executionId}`);
    if (!state) return false;
    state.run.status = status;
    return true;
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
      state.run.status = this.simulated(kind).status('stopping');
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

  /** Runs of one flow / job, newest first; without a name, every run of the kind (Batch lists a queue's jobs). */
  list(kind: JobKind, name?: string): NonNullable<ReturnType<RunEngine['find']>>[] {
    return [...this.states.values()]
      .filter((s) => s.run.kind === kind && (name === undefined || s.run.name === name))
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
    this.deleted.clear();
    for (const [key, s] of this.states) if (s.run.endedAt !== undefined) this.states.delete(key);
    for (const [key, t] of this.tokens) if (!this.states.has(`${t.kind}:${t.executionId}`)) this.tokens.delete(key);
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

  /** The run's next progress event, if its kind sends any, while it has not ended. */
  private scheduleProgress(state: RunState): void {
    const progress = this.simulated(state.run.kind).progress;
    const everyMs = progress?.everyMs(state.run);
    if (!progress || everyMs === undefined || everyMs <= 0) return;
    const beat = this.schedule(() => {
      delete state.beat;
      if (state.run.endedAt !== undefined) return;
      this.emitProgress(progress.event(this.ctx, state.run));
      this.scheduleProgress(state);
    }, everyMs);
    if (beat) state.beat = beat;
  }

  /** Puts an event on the local bus as it is (the stack's own PutEvents: a job set run completed). */
  putOnBus(event: EventBridgeEvent): void {
    this.emitProgress(event);
  }

  private emitProgress(event: EventBridgeEvent): void {
    try {
      const result = this.options.emit?.(structuredClone(event));
      if (result && typeof (result as Promise<void>).then === 'function') (result as Promise<void>).then(undefined, () => undefined);
    } catch {
      // a lost progress event is what the run's deadline is for
    }
  }

  private finish(state: RunState, outcome: SimOutcome): void {
    const { run } = state;
    if (run.endedAt !== undefined) return;
    if (state.timer) this.unschedule(state.timer);
    delete state.timer;
    if (state.beat) this.unschedule(state.beat);
    delete state.beat;
    run.endedAt = this.now();
    run.endSeq = this.seq++;
    run.outcome = outcome;
    const service = this.simulated(run.kind);
    run.status = service.status('ended', outcome);
    if (outcome === 'stopped') {
      state.recordsProcessed = 0;
      state.bytesProcessed = 0;
    }
    const event = service.endEvent(this.ctx, {
      run,
      outcome,
      recordsProcessed: state.recordsProcessed,
      bytesProcessed: state.bytesProcessed,
      ...(state.errorMessage ? { errorMessage: state.errorMessage } : {}),
    });
    if (!event) return;
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
