import { randomUUID } from 'node:crypto';
import type { Context } from 'aws-lambda';
import { InjectedFaultError } from '../../shared/errors';
import {
  afterAttempt,
  type AsyncInvokeConfig,
  AttemptOutcome,
  DiscardCondition,
  type EventProgress,
  type InvocationRecord,
  invocationRecord,
  isExpired,
} from './asyncRules';
import { type InvocationScope, runInvocation } from './invocation';

/**
 * Lambda's asynchronous invocation for the local stack (the rules are local/lambda/asyncRules.ts, with the AWS
 * pages they come from): an event is accepted at once, run in the background with its function's timeout enforced
 * (runInvocation), retried after a function error or a throttle as the function's EventInvokeConfig says, and, when
 * given up, sent to its on-failure destination as an invocation record. Delays and event ages are compressed by the
 * stack's timeScale (serverless.yml custom.local.timeScale: a minute's wait is 1.2 s at 0.02); function timeouts are not
 * (a handler runs in real time).
 */

export interface AsyncFunction {
  config: AsyncInvokeConfig;
  /** the function's timeout (serverless.yml `timeout`), real ms */
  timeoutMs: number;
  functionArn: string;
}

export interface AsyncInvokerOptions {
  functions: Record<string, AsyncFunction>;
  /** Runs the handler once (in this thread or a worker); called inside the invocation's scope. */
  dispatch: (functionName: string, event: unknown, context: Context) => Promise<unknown>;
  /** A Lambda context for one attempt with this timeout. */
  context: (functionName: string, timeoutMs: number) => Context;
  /** Real seconds per AWS second for retry delays and event ages. Default 1. */
  timeScale?: number;
  /** Delivers an invocation record to a function's on-failure destination (as configured, unresolved). */
  sendToDestination?: (destination: unknown, record: InvocationRecord) => Promise<void>;
  /** Events kept for `events()`, oldest dropped first. Default 10,000. */
  maxRecords?: number;
  now?: () => number;
}

/** One attempt at an event. */
export interface AsyncAttempt {
  startedAt: number;
  endedAt: number;
  outcome: AttemptOutcome;
  error?: string;
  timedOut?: boolean;
}

/** One event Lambda queued for a function, and what became of it. */
export interface AsyncEvent {
  requestId: string;
  functionName: string;
  queuedAt: number;
  /** a second delivery of an event Lambda already had (its queue is at least once) */
  duplicate: boolean;
  attempts: AsyncAttempt[];
  /** absent while Lambda still has it */
  outcome?: 'succeeded' | DiscardCondition | 'stopped';
}

/** An event Lambda gave up, with the record sent to its on-failure destination (if the function has one). */
export interface AsyncFailure {
  functionName: string;
  record: InvocationRecord;
  destination?: unknown;
  /** false if the destination refused the record (on AWS: the DestinationDeliveryFailures metric) */
  delivered?: boolean;
}

/** Failures a test asks for, by function, each for the next n events' attempts. */
export interface LambdaFaults {
  /** The next n attempts fail with a function error before the handler runs (an error at init, say). */
  failNext(functionName: string, n?: number): void;
  /** The next n attempts time out after `afterMs` (real ms) instead of the function's timeout: abandoned mid-flight. */
  timeOutNext(functionName: string, afterMs: number, n?: number): void;
  /** The next n attempts are throttled (429) before they run: retried with backoff, not counted as retries. */
  throttleNext(functionName: string, n?: number): void;
  /** The next n events are delivered twice (Lambda may deliver an event more than once, even without an error). */
  duplicateNext(functionName: string, n?: number): void;
}

type Fault = { kind: 'fail' } | { kind: 'throttle' } | { kind: 'timeout'; afterMs: number };

export class AsyncInvoker {
  readonly faults: LambdaFaults;
  private readonly records: AsyncEvent[] = [];
  private readonly discarded: AsyncFailure[] = [];
  private readonly pendingFaults = new Map<string, Fault[]>();
  private readonly duplicates = new Map<string, number>();
  private readonly overrides = new Map<string, Partial<AsyncInvokeConfig>>();
  private readonly waits = new Map<NodeJS.Timeout, (proceed: boolean) => void>();
  private readonly processing = new Set<Promise<unknown>>();
  private readonly abandoned = new Set<Promise<unknown>>();
  private readonly live = new Set<InvocationScope>();
  private drainWaiters: Array<() => void> = [];
  private closed = false;
  private readonly timeScale: number;
  private readonly now: () => number;

  constructor(private readonly options: AsyncInvokerOptions) {
    this.timeScale = options.timeScale ?? 1;
    this.now = options.now ?? Date.now;
    const add = (functionName: string, n: number, fault: Fault) => {
      this.function(functionName);
      const list = this.pendingFaults.get(functionName) ?? [];
      for (let i = 0; i < n; i++) list.push(fault);
      this.pendingFaults.set(functionName, list);
    };
    this.faults = {
      failNext: (name, n = 1) => add(name, n, { kind: 'fail' }),
      timeOutNext: (name, afterMs, n = 1) => add(name, n, { kind: 'timeout', afterMs }),
      throttleNext: (name, n = 1) => add(name, n, { kind: 'throttle' }),
      duplicateNext: (name, n = 1) => {
        this.function(name);
        this.duplicates.set(name, (this.duplicates.get(name) ?? 0) + n);
      },
    };
  }

  /**
   * Invokes asynchronously (InvocationType Event): accepted at once, run in the background. The promise is the event's
   * fate: the value of the attempt that succeeded, or the last error once Lambda gave the event up.
   */
  invoke(functionName: string, event: unknown): Promise<unknown> {
    if (this.closed) return Promise.reject(new Error('the local Lambda service is stopped'));
    this.function(functionName);
    const fate = this.track(this.process(functionName, event, false));
    const twice = this.duplicates.get(functionName) ?? 0;
    if (twice > 0) {
      this.duplicates.set(functionName, twice - 1);
      void this.track(this.process(functionName, event, true)).catch(() => undefined);
    }
    return fate;
  }

  /** Changes a function's asynchronous configuration, as PutFunctionEventInvokeConfig does (for the rest of the run). */
  configure(functionName: string, config: Partial<AsyncInvokeConfig>): void {
    this.function(functionName);
    this.overrides.set(functionName, { ...this.overrides.get(functionName), ...config });
  }

  config(functionName: string): AsyncInvokeConfig {
    return { ...this.function(functionName).config, ...this.overrides.get(functionName) };
  }

  events(): readonly AsyncEvent[] {
    return this.records;
  }

  /** Events given up (retries exhausted, too old), with their invocation records. */
  failures(): readonly AsyncFailure[] {
    return this.discarded;
  }

  /** Resolves when no event is queued, waiting for a retry or running. */
  drain(): Promise<void> {
    if (this.processing.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  /**
   * Refuses new events, drops those waiting for a retry, and shuts down the attempts running as Lambda shuts down an
   * environment: abandoned (their AWS calls refused from now on), then waited for until they settle.
   */
  async close(): Promise<void> {
    this.closed = true;
    for (const [timer, proceed] of this.waits) {
      clearTimeout(timer);
      proceed(false);
    }
    this.waits.clear();
    for (const scope of this.live) scope.abandon('the local stack stopped');
    // An attempt abandoned just now joins `abandoned` as its event settles: wait until both are empty.
    while (this.processing.size + this.abandoned.size > 0) await Promise.allSettled([...this.processing, ...this.abandoned]);
  }

  private function(functionName: string): AsyncFunction {
    const fn = this.options.functions[functionName];
    if (!fn) throw new Error(`no function ${functionName}`);
    return fn;
  }

  private modelNow(): number {
    return this.now() / this.timeScale;
  }

  private async process(functionName: string, event: unknown, duplicate: boolean): Promise<unknown> {
    const payload = JSON.stringify(event ?? null); // what Lambda keeps: the event's JSON
    const record: AsyncEvent = { requestId: randomUUID(), functionName, queuedAt: this.now(), duplicate, attempts: [] };
    this.keep(record);
    const progress: EventProgress = { queuedAt: this.modelNow(), functionErrors: 0, throttles: 0 };
    let lastError: unknown;
    // The first attempt too is never run inside the caller (202 first).
    if (!(await this.wait(0))) return this.stopped(record);
    for (;;) {
      const config = this.config(functionName);
      if (isExpired(progress.queuedAt, this.modelNow(), config)) {
        return this.giveUp(record, payload, DiscardCondition.EventAgeExceeded, lastError);
      }
      const attempt = await this.attempt(functionName, JSON.parse(payload) as unknown);
      record.attempts.push(attempt.record);
      if (attempt.record.outcome === AttemptOutcome.Succeeded) {
        record.outcome = 'succeeded';
        return attempt.value;
      }
      lastError = attempt.error;
      if (attempt.record.outcome === AttemptOutcome.FunctionError) progress.functionErrors++;
      else progress.throttles++;
      const next = afterAttempt(progress, attempt.record.outcome, this.modelNow(), this.config(functionName));
      if (next.step === 'discard') return this.giveUp(record, payload, next.condition, lastError);
      if (next.step === 'retry' && !(await this.wait(next.afterMs * this.timeScale))) return this.stopped(record, lastError);
    }
  }

  private async attempt(functionName: string, event: unknown): Promise<{ record: AsyncAttempt; value?: unknown; error?: unknown }> {
    const fn = this.function(functionName);
    const fault = this.pendingFaults.get(functionName)?.shift();
    const startedAt = this.now();
    if (fault?.kind === 'throttle') {
      const error = new InjectedFaultError(`Rate Exceeded (fault injection: ${functionName} throttled)`);
      error.name = 'TooManyRequestsException';
      return { record: { startedAt, endedAt: this.now(), outcome: AttemptOutcome.Throttled, error: error.message }, error };
    }
    const timeoutMs = fault?.kind === 'timeout' ? fault.afterMs : fn.timeoutMs;
    let scope: InvocationScope | undefined;
    const result = await runInvocation({
      functionName,
      timeoutMs,
      onStart: (started) => {
        scope = started;
        this.live.add(started);
      },
      run: () =>
        fault?.kind === 'fail'
          ? Promise.reject(new InjectedFaultError(`fault injection: ${functionName} failed before its handler ran`))
          : this.options.dispatch(functionName, event, this.options.context(functionName, timeoutMs)),
      onAbandoned: (still) => this.trackAbandoned(still),
    });
    this.live.delete(scope!);
    const endedAt = this.now();
    if (result.ok) return { record: { startedAt, endedAt, outcome: AttemptOutcome.Succeeded }, value: result.value };
    return {
      record: {
        startedAt,
        endedAt,
        outcome: AttemptOutcome.FunctionError,
        error: describe(result.error),
        ...(result.timedOut && { timedOut: true }),
      },
      error: result.error,
    };
  }

  private async giveUp(record: AsyncEvent, payload: string, condition: DiscardCondition, lastError: unknown): Promise<never> {
    record.outcome = condition;
    const fn = this.function(record.functionName);
    const invocation = invocationRecord({
      at: this.now(),
      requestId: record.requestId,
      functionArn: fn.functionArn,
      condition,
      attempts: record.attempts.length,
      event: JSON.parse(payload) as unknown,
      ...(lastError !== undefined && { lastError }),
    });
    const destination = this.config(record.functionName).onFailure;
    const failure: AsyncFailure = {
      functionName: record.functionName,
      record: invocation,
      ...(destination !== undefined && { destination }),
    };
    if (destination !== undefined && this.options.sendToDestination) {
      try {
        await this.options.sendToDestination(destination, invocation);
        failure.delivered = true;
      } catch {
        failure.delivered = false;
      }
    }
    this.discarded.push(failure);
    throw lastError ?? new Error(`Lambda discarded the event: ${condition}`);
  }

  private stopped(record: AsyncEvent, lastError?: unknown): never {
    record.outcome = 'stopped';
    throw lastError ?? new Error('the local Lambda service stopped before the event ran');
  }

  private keep(record: AsyncEvent): void {
    this.records.push(record);
    if (this.records.length > (this.options.maxRecords ?? 10_000)) this.records.shift();
  }

  private track<T>(work: Promise<T>): Promise<T> {
    this.processing.add(work);
    const done = () => {
      this.processing.delete(work);
      if (this.processing.size === 0) {
        const waiters = this.drainWaiters;
        this.drainWaiters = [];
        waiters.forEach((resolve) => resolve());
      }
    };
    work.then(done, done);
    return work;
  }

  private trackAbandoned(still: Promise<unknown>): void {
    this.abandoned.add(still);
    void still.finally(() => this.abandoned.delete(still));
  }

  /** Resolves true after ms (real), or false if the invoker closes first. */
  private wait(ms: number): Promise<boolean> {
    if (this.closed) return Promise.resolve(false);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waits.delete(timer);
        resolve(true);
      }, ms);
      this.waits.set(timer, resolve);
    });
  }
}

const describe = (error: unknown) => (error instanceof Error ? `${error.name}: ${error.message}` : String(error));
