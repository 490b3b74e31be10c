import fc from 'fast-check';
import { demandOf, type RunCompletion } from '../../../shared/domain/job';
import { type Demand, keyPrefix } from '../../../shared/domain/limits';
import { classifyStartError } from '../../../shared/adapters/startErrors';
import { RunStatus } from '../../../shared/ports/jobStarter';
import { SimulatedCrash } from '../fakes/crash';
import type { FakeRun } from '../fakes/fakeStarter';
import { T0 } from '../fakes/manualClock';
import { ProtocolBreach } from '../fakes/inMemoryStore';
import { checkFinal, ExploreViolation, StepInvariants, type ViolationCategory } from './invariants';
import { describeCall, describeError, describeResult } from './labels';
import {
  type CallFault,
  describeScenario,
  type Faults,
  gateNames,
  type JobDef,
  jobName,
  keyName,
  poolName,
  RATED_INTERVAL_MS,
  setLimitGate,
  stallSpan,
  type Scenario,
  scenarioArb,
  type ScenarioOptions,
  type StartFault,
  type Step,
  unlimitedPoolOf,
} from './scenario';
import {
  type ExploreServices,
  type ExploreWorld,
  type ExploreWorldOptions,
  makeExploreWorld,
  type PortName,
  type PortWrapper,
} from './world';
import { type DynamoExploreWorld, makeDynamoWorld } from './dynamoWorld';
import { answerWith, DynamoFault, type DynamoRequest } from '../../../local/faults/dynamoFaults';
import { DYNAMO_CALL_FAULTS, RATED_POOL_INTERVAL_MS } from './scenario';

/** Where the services' stores live: the in-memory fake (every port call a step), or the real DynamoDB adapters on dynalite (every DynamoDB request a step). */
export type Engine = 'memory' | 'dynalite';

/** The in-memory stores' calls that write a job record (what a stall counts: the writes its version fences). */
const JOB_WRITES = new Set([
  'take',
  'free',
  'freeOverLimit',
  'pass',
  'claim',
  'reserve',
  'addWaiter',
  'register',
  'move',
  'forget',
  'heartbeat',
]);

/** The lease store's calls that admit a job (where a counter's race can be lost). */
const ADMISSIONS = new Set(['take', 'pass', 'reserve', 'book']);

/**
 * Runs one scenario under fast-check's scheduler. Every port call of every invocation (and the beginning of every
 * invocation, and every run the job API ends) is a scheduled task: the call is made, its effect applied and its answer
 * given only when the scheduler releases it, one task at a time, with the invariants checked after each.
 */

/** SQS gives a message back this long after a receive whose invocation failed or died (serverless.yml: 180 s). */
export const VISIBILITY_TIMEOUT_MS = 180_000;
const DRAIN_ROUNDS = 40;

/**
 * A schedule that has not finished within either bound is reported as a violation (`did-not-finish`), its seed and
 * path with it, rather than left to run for ever: a loop that never ends, or a wait that nothing will end. The step
 * bound decides (it does not depend on the machine's speed): far above what a finishing schedule takes (in memory a few
 * hundred steps, on dynalite a few hundred requests). The wall bound only catches what takes no steps (a promise
 * nothing resolves, a request never answered): generous, so that a loaded machine does not trip it.
 */
export const SCHEDULE_LIMITS: Record<Engine, ScheduleLimits> = {
  memory: { maxSteps: 20_000, maxMs: 120_000 },
  dynalite: { maxSteps: 5_000, maxMs: 300_000 },
};

export interface ScheduleLimits {
  /** scheduled steps released (port calls, requests, invocation beginnings) */
  maxSteps: number;
  /** wall-clock ms for the whole schedule (world set-up and end checks included) */
  maxMs: number;
}

/**
 * How long each function may run (serverless.yml `timeout`; an operator's setLimit from the CLI is given the same as a
 * Lambda's): a stalled invocation is never held past it (https://docs.aws.amazon.com/lambda/latest/dg/configuration-timeout.html).
 */
const TIMEOUT_MS: Record<string, number> = { acquirer: 30_000, releaser: 30_000, reconciler: 120_000, admin: 30_000 };

export interface TaskMeta {
  who: string;
  what: string;
  result?: string;
}

/** The answer of a port call was lost after its write applied: the caller sees an error, the store has the write. */
export class LostAnswer extends Error {
  constructor(what: string) {
    super(`answer lost after the write applied (${what})`);
    this.name = 'LostAnswer';
  }
}

interface Invocation {
  name: string;
  faults: Faults;
  calls: number;
  /** writes to job records so far (what a stall fault counts) */
  writes: number;
  dead: boolean;
  startFaultUsed: boolean;
  /** when it began (the clock), and how long its function may run */
  beganAt: number;
  timeoutMs: number;
}

/** A call held by a stall fault: sent (scheduled) by `release`, once the run lets it go. */
interface Stalled {
  inv: Invocation;
  what: string;
  /** index of the wave at whose end it may go (the end phase counts as wave `waves.length`; a long stall: never) */
  untilWave: number;
  release: () => void;
}

interface SqsMessage {
  id: string;
  body: string;
  jobId: string;
  reserved: boolean;
  sentAt: number;
  availableAt: number;
  state: 'queued' | 'in-flight' | 'deleted';
}

type Outcome = 'ok' | 'failed' | 'crashed';

interface Mark {
  at: number;
  text: string;
}

const settle = () => new Promise<void>((resolve) => setImmediate(resolve));
const isProgrammingError = (error: unknown) =>
  error instanceof TypeError ||
  error instanceof ReferenceError ||
  error instanceof RangeError ||
  error instanceof SyntaxError ||
  error instanceof ProtocolBreach;

export class ExploreRun {
  world!: ExploreWorld;
  private dynamo?: DynamoExploreWorld<Invocation>;
  private readonly worldOptions: ExploreWorldOptions;
  readonly pools: string[];
  /** the pools, then the keyed limits (`key/<key>`) */
  readonly gates: string[];
  readonly jobIds: string[];
  private readonly sqs: SqsMessage[] = [];
  private readonly history: SqsMessage[] = [];
  private bus: RunCompletion[] = [];
  private late: RunCompletion[] = [];
  /** jobs the job API refused for good: every later start of them is refused too */
  private readonly refused = new Set<string>();
  private readonly counters = new Map<string, number>();
  private readonly marks: Mark[] = [];
  private readonly problems: ExploreViolation[] = [];
  /** calls held by stall faults, oldest first */
  private readonly stalled: Stalled[] = [];
  /** the wave being run (waves.length in the end phase) */
  private wave = 0;
  /** set once the schedule is past its bounds: every later step throws it */
  private aborted?: ExploreViolation;
  private readonly startedAt = Date.now();
  private invariants!: StepInvariants;
  private readonly rated: Map<string, number>;
  private messages = 0;
  private released = 0;
  /** ids of the tasks scheduled and not released yet, oldest first (the scheduler's own ids: 1, 2, ... in scheduling order) */
  private readonly pending: number[] = [];
  private lastTaskId = 0;
  private readonly s: fc.Scheduler<TaskMeta>;

  constructor(
    readonly scenario: Scenario,
    scheduler: SchedulerSource,
    private readonly ignore: ReadonlySet<ViolationCategory> = new Set(),
    private readonly engine: Engine = 'memory',
    private readonly limits: ScheduleLimits = SCHEDULE_LIMITS[engine],
  ) {
    this.s = scheduler.make(this.pending);
    this.pools = scenario.limits.map((_, i) => poolName(i));
    this.gates = gateNames(scenario);
    this.jobIds = scenario.jobs.map((_, i) => jobName(i));
    const rates: Record<string, number> = {
      ...(scenario.keyLimits && { [`key/${keyPrefix(keyName(1))}:*`]: 1000 / RATED_INTERVAL_MS }),
      ...(scenario.ratedPools && Object.fromEntries(this.pools.map((pool) => [pool, 1000 / RATED_POOL_INTERVAL_MS]))),
    };
    const unlimited = unlimitedPoolOf(scenario);
    this.worldOptions = {
      pools: Object.fromEntries(scenario.limits.map((limit, i) => [poolName(i), limit]).filter(([pool]) => pool !== unlimited)),
      ...(unlimited && { settings: { unlimitedPools: [unlimited] } }),
      keyLimits: Object.fromEntries((scenario.keyLimits ?? []).map((limit, i) => [keyPrefix(keyName(i)), limit])),
      rates,
      ...(scenario.indexLagCalls !== undefined && { holdersIndexLagCalls: scenario.indexLagCalls }),
    };
    this.rated = new Map<string, number>([
      ...(scenario.keyLimits ? [[`key/${keyName(1)}`, RATED_INTERVAL_MS] as [string, number]] : []),
      ...(scenario.ratedPools ? this.pools.map((pool) => [pool, RATED_POOL_INTERVAL_MS] as [string, number]) : []),
    ]);
  }

  /** Makes the world the scenario runs in (a fresh table on the DynamoDB engine). */
  private async open(): Promise<void> {
    if (this.engine === 'dynalite') {
      this.dynamo = await makeDynamoWorld<Invocation>(this.worldOptions, {
        request: (inv, request, send) => this.request(inv, request, send),
      });
      this.world = this.dynamo;
    } else {
      this.world = makeExploreWorld(this.worldOptions);
    }
    this.invariants = new StepInvariants(this.world.observe, this.gates, this.demands(), this.ignore, this.rated);
  }

  /** Runs an invocation's work so that, on the DynamoDB engine, its requests are known to be its own. */
  private within<T>(inv: Invocation, work: () => T): T {
    return this.dynamo ? this.dynamo.within(inv, work) : work();
  }

  /**
   * What each job takes, from the scenario (never from the stores): what its take counts (a job of the unlimited pool
   * with no keyed limit and no rate counts against no limit, so its runs are not held to the pool counter's limit).
   */
  private demands(): Map<string, Demand> {
    // Written out here rather than asked of shared/domain/unlimited.ts: the oracle does not trust the code it checks.
    const unlimited = unlimitedPoolOf(this.scenario);
    return new Map(
      this.scenario.jobs.map((job, i) => {
        const demand = demandOf({ pool: poolName(job.pool % this.scenario.limits.length), ...flowControlOf(job) });
        const uncounted = demand.pool === unlimited && demand.keys.length === 0 && !this.scenario.ratedPools;
        return [jobName(i), uncounted ? { ...demand, uncounted: true } : demand];
      }),
    );
  }

  /**
   * Runs the scenario within its bounds (SCHEDULE_LIMITS): one that has not finished by then throws `did-not-finish`,
   * whatever it is waiting on (the run itself stops at its next step).
   */
  async run(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const overtime = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        this.aborted ??= this.didNotFinish(`still running after ${this.limits.maxMs / 1000} s of wall-clock time (${this.released} steps)`);
        reject(this.withSchedule(this.aborted));
      }, this.limits.maxMs);
    });
    const body = this.body();
    body.catch(() => undefined); // once over time, what the abandoned run throws is not the answer
    try {
      await Promise.race([body, overtime]);
    } finally {
      clearTimeout(timer);
      if (this.aborted) await this.dynamo?.close();
    }
  }

  private didNotFinish(why: string): ExploreViolation {
    return new ExploreViolation('did-not-finish', `schedule did not finish: ${why}`);
  }

  private withSchedule(violation: ExploreViolation): ExploreViolation {
    if (!violation.schedule) {
      this.mark(`!! ${violation.message}`);
      violation.schedule = this.renderSchedule();
      violation.fcReport = String(this.s);
    }
    return violation;
  }

  private async body(): Promise<void> {
    await this.open();
    try {
      this.scenario.jobs.forEach((job, i) => {
        const id = jobName(i);
        const pool = poolName(job.pool % this.pools.length);
        const spec = {
          ...(job.kind === 'appflow'
            ? { id, pool, kind: job.kind, flowName: `flow-${id}` }
            : { id, pool, kind: job.kind, jobName: `glue-${id}` }),
          ...flowControlOf(job),
        };
        for (let copy = 0; copy < job.copies; copy++) this.enqueue(JSON.stringify(spec), 0, false);
      });
      await this.invariants.check();
      for (const [i, wave] of this.scenario.waves.entries()) {
        // A stalled invocation is never held past its function's timeout: it goes before a clock move that would pass it.
        const now = this.world.clock.now();
        await this.releaseStalled((held) => now + wave.advanceMs - held.inv.beganAt > held.inv.timeoutMs);
        this.wave = i;
        if (wave.advanceMs > 0) this.world.clock.advance(wave.advanceMs);
        this.bus.push(...this.late.splice(0));
        this.mark(`-- wave ${i + 1} at t=${this.t()} s`);
        for (const step of wave.steps) this.launch(step);
        await this.drive();
      }
      this.wave = this.scenario.waves.length;
      await this.drain();
      await checkFinal(this.world.observe, this.gates, this.jobIds, this.ignore);
    } catch (error) {
      const violation =
        error instanceof ExploreViolation
          ? error
          : new ExploreViolation('unexpected-error', `the harness failed: ${(error as Error)?.stack ?? String(error)}`);
      throw this.withSchedule(violation);
    } finally {
      if (!this.aborted) await this.dynamo?.close();
    }
  }

  // ---- the scheduler -------------------------------------------------------------------------------------------

  /** Schedules `fn` to run when the scheduler releases this task: nothing of it happens before. */
  private scheduleTask<T>(meta: TaskMeta, fn: () => Promise<T> | T): Promise<T> {
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const task = gate.then(fn).then(
      (value) => {
        meta.result ??= describeResult(value);
        return value;
      },
      (error: unknown) => {
        meta.result ??= `✗ ${describeError(error)}`;
        throw error;
      },
    );
    task.catch(() => undefined); // the caller gets the scheduled copy of it
    const taskId = ++this.lastTaskId;
    this.pending.push(taskId);
    return this.s.schedule(task, `${meta.who} ${meta.what}`, meta, async (release) => {
      this.released++;
      this.pending.splice(this.pending.indexOf(taskId), 1);
      open();
      await release();
    });
  }

  /**
   * Releases scheduled tasks one at a time until none is left, checking the invariants after each; then sends the calls
   * stalled until this wave's end (`hold`: in the end phase, none: they go before the clock moves), and so on.
   */
  private async drive(hold = false): Promise<void> {
    for (;;) {
      await this.settle();
      this.collect();
      while (this.s.count() > 0) {
        this.checkBounds();
        await this.s.waitNext(1);
        await this.settle(); // every continuation runs up to its next port call or request
        this.collect();
        if (this.problems.length > 0) throw this.problems[0];
        await this.invariants.check();
      }
      if (hold || !this.letGo((held) => held.untilWave <= this.wave)) return;
    }
  }

  /** Throws once the schedule is past its bounds (or was found past them by the wall-clock timer). */
  private checkBounds(): void {
    if (!this.aborted && this.released >= this.limits.maxSteps)
      this.aborted = this.didNotFinish(`more than ${this.limits.maxSteps} steps (something loops)`);
    if (!this.aborted && Date.now() - this.startedAt > this.limits.maxMs)
      this.aborted = this.didNotFinish(`still running after ${this.limits.maxMs / 1000} s of wall-clock time (${this.released} steps)`);
    if (this.aborted) throw this.aborted;
  }

  /** Sends the stalled calls `which` picks (each becomes a scheduled step); true if there was one. */
  private letGo(which: (held: Stalled) => boolean): boolean {
    const going = this.stalled.filter(which);
    for (const held of going) {
      this.stalled.splice(this.stalled.indexOf(held), 1);
      this.mark(`   ${held.inv.name} goes on after its stall: ${held.what}`);
      held.release();
    }
    return going.length > 0;
  }

  /** Sends the stalled calls `which` picks and drives until they and what follows them are done. */
  private async releaseStalled(which: (held: Stalled) => boolean = () => true): Promise<void> {
    if (this.letGo(which)) await this.drive(true);
  }

  /**
   * A stall fault: the call is held, sent only when the run lets it go (./scenario.ts, STALL). The invocation meanwhile
   * waits on it as on any slow request.
   */
  private stall<T>(inv: Invocation, fault: CallFault, what: string, send: () => Promise<T>): Promise<T> {
    this.mark(`   ${inv.name} stalls before ${what} (${stallSpan(fault)})`);
    const untilWave = fault.long ? Number.POSITIVE_INFINITY : this.wave;
    return new Promise<void>((release) => this.stalled.push({ inv, what, untilWave, release })).then(send);
  }

  /** In memory the fakes use microtasks only: one macrotask lets every continuation reach its next call. */
  private async settle(): Promise<void> {
    if (this.dynamo) await this.dynamo.settle();
    else await settle();
  }

  // ---- ports -----------------------------------------------------------------------------------------------------

  /** Wraps every method of a port object, whatever it is called: each call becomes a scheduled task. */
  private wrapFor(inv: Invocation): PortWrapper {
    return <T extends object>(port: T, name: PortName): T =>
      new Proxy(port, {
        get: (target, prop, receiver) => {
          const value = Reflect.get(target, prop, receiver) as unknown;
          if (typeof value !== 'function' || typeof prop === 'symbol') return value;
          return (...args: unknown[]) =>
            this.call(inv, name, prop, args, () => (value as (...a: unknown[]) => Promise<unknown>).apply(target, args));
        },
      });
  }

  private call(inv: Invocation, port: PortName, method: string, args: unknown[], run: () => Promise<unknown>): Promise<unknown> {
    // A dead process makes no more calls (even where the code catches the first error).
    if (inv.dead) return Promise.reject(new SimulatedCrash(`${port}.${method}`));
    const n = ++inv.calls;
    const isStart = (port === 'appflow' || port === 'glue') && method === 'start';
    const jobId = isStart ? (args[0] as { id: string }).id : undefined;
    let fault: CallFault | StartFault | undefined;
    if (jobId !== undefined && this.refused.has(jobId)) fault = { t: 'refused' };
    else fault = this.callFaultAt(inv, n, port, method);
    if (!fault && isStart && inv.faults.start && !inv.startFaultUsed) {
      inv.startFaultUsed = true;
      fault = inv.faults.start;
    }
    if (fault === undefined && this.stallsHere(inv, port, method)) {
      const stalled: TaskMeta = { who: inv.name, what: `${describeCall(port, method, args)} [after a stall]` };
      return this.stall(inv, inv.faults.call!, describeCall(port, method, args), () =>
        this.scheduleTask(stalled, () => this.perform(inv, port, jobId, run, undefined, stalled)),
      );
    }
    const meta: TaskMeta = { who: inv.name, what: `${describeCall(port, method, args)}${fault ? ` [${describeFault(fault)}]` : ''}` };
    return this.scheduleTask(meta, () => this.perform(inv, port, jobId, run, fault, meta));
  }

  /** In memory: whether this call of `port.method` is the job write the invocation's stall fault holds (counting it). */
  private stallsHere(inv: Invocation, port: PortName, method: string): boolean {
    if ((port !== 'leases' && port !== 'ledger') || !JOB_WRITES.has(method)) return false;
    inv.writes++;
    return inv.faults.call?.t === 'stall' && inv.faults.call.at === inv.writes;
  }

  /** The invocation's call fault, if it applies to its `n`-th call, a call of `port.method`. */
  private callFaultAt(inv: Invocation, n: number, port: PortName, method: string): CallFault | undefined {
    const fault = inv.faults.call;
    if (!fault || fault.t === 'dynamo' || fault.t === 'stall') return undefined; // dynamo: DynamoDB requests only; stall: writes (stallsHere)
    switch (fault.t) {
      case 'contended':
        return n >= fault.at && port === 'leases' && ADMISSIONS.has(method) ? fault : undefined;
      case 'retried':
        // Only the stores' requests are sent again by the SDK (the job API clients make one attempt: awsClients.ts).
        return fault.at === n && (port === 'leases' || port === 'ledger') ? fault : undefined;
      default:
        return fault.at === n ? fault : undefined;
    }
  }

  private async perform(
    inv: Invocation,
    port: PortName,
    jobId: string | undefined,
    run: () => Promise<unknown>,
    fault: CallFault | StartFault | undefined,
    meta: TaskMeta,
  ): Promise<unknown> {
    if (inv.dead) {
      // Sent before its invocation died: the request lands, nobody reads the answer.
      await run().catch(() => undefined);
      meta.result = 'applied; its invocation had died';
      throw new SimulatedCrash(meta.what);
    }
    const what = `start ${jobId} (explore)`;
    const sdkError = (name: string, status?: number) =>
      classifyStartError(
        Object.assign(new Error(`${name} (explore)`), { name, $metadata: status ? { httpStatusCode: status } : {} }),
        what,
      );
    switch (fault?.t) {
      case undefined:
        return run();
      case 'crash-before':
        inv.dead = true;
        meta.result = 'died before the call';
        throw new SimulatedCrash(meta.what);
      case 'crash-after':
        await run().catch(() => undefined);
        inv.dead = true;
        meta.result = 'applied, then the invocation died';
        throw new SimulatedCrash(meta.what);
      case 'lost':
        await run();
        meta.result = '✗ applied, answer lost';
        throw new LostAnswer(meta.what);
      case 'retried': {
        // The SDK sends a request whose answer was lost again: the caller sees the answer of the second one.
        await run();
        const again = await run();
        meta.result = `applied, answer lost, sent again -> ${describeResult(again)}`;
        return again;
      }
      case 'contended':
        // The in-memory store answers as the adapter does once every try lost its race: nothing written.
        return this.world.contend!(run);
      case 'dynamo':
      case 'stall': // held before it was scheduled (call)
        return run(); // only DynamoDB requests take it
      // Start faults go through the adapters' classifyStartError, as the job API's answers would.
      case 'throttle':
        throw sdkError('ThrottlingException', 400);
      case '5xx':
        if (fault.started) await run();
        throw sdkError(port === 'glue' ? 'InternalServiceException' : 'InternalServerException', 500);
      case 'no-answer':
        if (fault.started) await run();
        throw sdkError('TimeoutError');
      case 'refused':
        if (jobId !== undefined) this.refused.add(jobId);
        throw sdkError(port === 'glue' ? 'EntityNotFoundException' : 'ResourceNotFoundException', 400);
    }
  }

  /** One DynamoDB request (one attempt) of an invocation, on the DynamoDB engine: a scheduled step, with its faults. */
  private request(inv: Invocation, request: DynamoRequest, send: () => Promise<unknown>): Promise<unknown> {
    if (inv.dead) return Promise.reject(new SimulatedCrash(`dynamodb.${request.operation}`));
    const n = ++inv.calls;
    const callFault = inv.faults.call;
    let fault: CallFault | undefined;
    if (request.writes && request.items.some(isJob)) inv.writes++;
    if (callFault?.t === 'contended') {
      if (n >= callFault.at && request.items.some(isCounter)) fault = callFault;
    } else if (callFault?.t === 'stall') {
      if (request.writes && request.items.some(isJob) && callFault.at === inv.writes) fault = callFault;
    } else if (callFault?.at === n) fault = callFault;
    const scheduled = (meta: TaskMeta, fault: CallFault | undefined) =>
      this.scheduleTask(meta, async () => {
        const out = await this.performRequest(inv, request, send, fault, meta);
        // The raw HTTP answer (the SDK parses it after this step): its status says enough for the schedule.
        meta.result ??= `HTTP ${(out as { response?: { statusCode?: number } }).response?.statusCode ?? '?'}`;
        return out;
      });
    if (fault?.t === 'stall')
      return this.stall(inv, fault, describeRequest(request), () =>
        scheduled({ who: inv.name, what: `${describeRequest(request)} [after a stall]` }, undefined),
      );
    return scheduled({ who: inv.name, what: `${describeRequest(request)}${fault ? ` [${describeFault(fault)}]` : ''}` }, fault);
  }

  private async performRequest(
    inv: Invocation,
    request: DynamoRequest,
    send: () => Promise<unknown>,
    fault: CallFault | undefined,
    meta: TaskMeta,
  ): Promise<unknown> {
    const answer = (dynamoFault: DynamoFault) => answerWith(dynamoFault, request, send as () => Promise<{ response?: { body?: unknown } }>);
    if (inv.dead) {
      await send().catch(() => undefined);
      meta.result = 'applied; its invocation had died';
      throw new SimulatedCrash(meta.what);
    }
    switch (fault?.t) {
      case undefined:
      case 'stall': // held before it was scheduled (request)
        return send();
      case 'crash-before':
        inv.dead = true;
        meta.result = 'died before the request';
        throw new SimulatedCrash(meta.what);
      case 'crash-after':
        await send().catch(() => undefined);
        inv.dead = true;
        meta.result = 'applied, then the invocation died';
        throw new SimulatedCrash(meta.what);
      case 'lost':
      case 'retried':
        meta.result = '✗ applied, answer lost (the SDK sends it again)';
        return answer(DynamoFault.LostAnswer);
      case 'dynamo': {
        const dynamoFault = DYNAMO_CALL_FAULTS[(fault.kind ?? 0) % DYNAMO_CALL_FAULTS.length]!;
        meta.result = `✗ ${dynamoFault}`;
        return answer(dynamoFault);
      }
      case 'contended': {
        // Another writer on each counter first: a booking on a rated one (its tat moves), a transaction on another.
        const counters = request.items.filter(isCounter);
        const rated = await Promise.all(counters.map((item) => this.dynamo!.phantomBooking(item)));
        if (rated.every(Boolean)) return send();
        meta.result = '✗ a transaction holds the counter';
        return answer(DynamoFault.Conflict);
      }
    }
  }

  // ---- invocations ---------------------------------------------------------------------------------------------

  private invocation(kind: string, faults: Faults): Invocation {
    const n = (this.counters.get(kind) ?? 0) + 1;
    this.counters.set(kind, n);
    return {
      name: `${kind}#${n}`,
      faults,
      calls: 0,
      writes: 0,
      dead: false,
      startFaultUsed: false,
      beganAt: this.world.clock.now(),
      timeoutMs: TIMEOUT_MS[kind] ?? 30_000,
    };
  }

  private services(inv: Invocation): ExploreServices {
    return this.world.services(this.wrapFor(inv));
  }

  /** Schedules the beginning of an invocation (or of a job API action): when it begins is the scheduler's choice too. */
  private launch(step: Step): void {
    switch (step.t) {
      case 'deliver':
      case 'duplicate': {
        const inv = this.invocation('acquirer', step.faults);
        const what = step.t === 'deliver' ? `receives visible message #${step.pick}` : `receives a duplicate of message #${step.pick}`;
        void this.scheduleTask({ who: inv.name, what: `begins: ${what}` }, () => this.beginDelivery(inv, step));
        return;
      }
      case 'event': {
        const inv = this.invocation('releaser', step.faults);
        void this.scheduleTask({ who: inv.name, what: `begins: gets event #${step.pick}` }, () => this.beginEvent(inv, step.pick));
        return;
      }
      case 'endRun': {
        const inv = this.invocation('jobapi', {});
        void this.scheduleTask({ who: inv.name, what: `a run ends ${step.outcome} (#${step.pick}, event ${step.fate})` }, () =>
          this.endRun(step),
        );
        return;
      }
      case 'reconcile': {
        const inv = this.invocation('reconciler', step.faults);
        void this.scheduleTask({ who: inv.name, what: 'begins' }, () => {
          void this.finish(
            inv,
            this.within(inv, () => this.services(inv).reconciler.run()),
          );
          return 'started';
        });
        return;
      }
      case 'setLimit': {
        const inv = this.invocation('admin', step.faults);
        const pool = setLimitGate(step.pool, this.scenario);
        void this.scheduleTask({ who: inv.name, what: `begins: setLimit ${pool} ${step.limit}` }, () => {
          void this.finish(
            inv,
            this.within(inv, () => this.services(inv).poolAdmin.setLimit(pool, step.limit)),
          );
          return 'started';
        });
        return;
      }
    }
  }

  private beginDelivery(inv: Invocation, step: Extract<Step, { t: 'deliver' | 'duplicate' }>): string {
    let message: SqsMessage | undefined;
    const visible = this.visible();
    if (step.t === 'deliver') {
      message = visible[step.pick % Math.max(1, visible.length)];
      if (!message) return 'nothing visible';
      message.state = 'in-flight';
    } else {
      const candidates = [...new Set([...this.history, ...visible])];
      message = candidates[step.pick % Math.max(1, candidates.length)];
      if (!message) return 'no message yet';
    }
    if (!this.history.includes(message)) this.history.push(message);
    const received = message;
    const processing = this.within(inv, () =>
      this.services(inv).acquirer.process({
        messageId: received.id,
        body: received.body,
        reservedHint: received.reserved || undefined,
        sentAt: received.sentAt,
      }),
    );
    void this.finish(inv, processing).then((outcome) => {
      const original = step.t === 'deliver';
      if (outcome === 'ok') {
        if (original) received.state = 'deleted';
      } else if (original || received.state === 'deleted') {
        // not deleted: SQS gives it back after the visibility timeout
        received.state = 'queued';
        received.availableAt = this.world.clock.now() + VISIBILITY_TIMEOUT_MS;
      }
    });
    return `${received.id} ${received.jobId}${received.reserved ? ' (reserved)' : ''}`;
  }

  private beginEvent(inv: Invocation, pick: number): string {
    if (this.bus.length === 0) return 'no event';
    const [event] = this.bus.splice(pick % this.bus.length, 1);
    void this.finish(
      inv,
      this.within(inv, () => this.services(inv).completeRun.complete(event!)),
    ).then((outcome) => {
      if (outcome !== 'ok') this.bus.push(event!); // EventBridge retries a failed delivery
    });
    return `${event!.executionId} ${event!.outcome} (${event!.name})`;
  }

  private endRun(step: Extract<Step, { t: 'endRun' }>): string {
    const running = this.running();
    const run = running[step.pick % Math.max(1, running.length)];
    if (!run) return 'no run in progress';
    const event = this.world.observe.endRun(run, step.outcome);
    if (step.fate === 'event') this.bus.push(event);
    if (step.fate === 'twice') this.bus.push(event, { ...event });
    if (step.fate === 'late') this.late.push(event);
    return `${run.executionId} of ${run.jobId}`;
  }

  private async finish(inv: Invocation, work: Promise<unknown>): Promise<Outcome> {
    let outcome: Outcome = 'ok';
    let text: string;
    try {
      text = `returned ${describeResult(await work)}`;
      if (inv.dead) outcome = 'crashed';
    } catch (error) {
      outcome = inv.dead ? 'crashed' : 'failed';
      text = `failed: ${describeError(error)}`;
      if (!inv.dead && isProgrammingError(error)) {
        this.problems.push(new ExploreViolation('unexpected-error', `${inv.name} threw ${(error as Error).stack ?? String(error)}`));
      }
    }
    this.mark(`   ${inv.name} ${outcome === 'crashed' ? 'died' : text}`);
    return outcome;
  }

  // ---- SQS, the bus, the job APIs --------------------------------------------------------------------------------

  private enqueue(body: string, delaySeconds: number, reserved: boolean): void {
    const now = this.world.clock.now();
    const jobId = (JSON.parse(body) as { id: string }).id;
    this.sqs.push({
      id: `m${++this.messages}`,
      body,
      jobId,
      reserved,
      sentAt: now,
      availableAt: now + delaySeconds * 1000,
      state: 'queued',
    });
  }

  private visible(): SqsMessage[] {
    const now = this.world.clock.now();
    return this.sqs.filter((m) => m.state === 'queued' && m.availableAt <= now);
  }

  /** What the services sent becomes SQS messages; runs the job API ended (stopped) put their events on the bus. */
  private collect(): void {
    for (const sent of this.world.observe.takeSent()) this.enqueue(sent.body, sent.delaySeconds, sent.reserved);
    this.bus.push(...this.world.observe.takeEvents());
  }

  private running(): FakeRun[] {
    return this.world.observe
      .runs()
      .filter((run) => run.status === RunStatus.InProgress)
      .sort((a, b) => a.executionId.localeCompare(b.executionId));
  }

  // ---- the end -----------------------------------------------------------------------------------------------------

  /**
   * No more faults: an operator un-pauses paused pools; every message is delivered, every event too, every run ends
   * (its event on time), delayed messages come due, then the clock passes every grace period (and the longest run) and
   * the reconciler runs; until a reconcile finds nothing to do.
   */
  private async drain(): Promise<void> {
    this.mark('-- end: no more faults; deliver everything, end every run, clock past every grace period, reconcile until quiet');
    const { settings } = this.world;
    const pastEverything =
      Math.max(
        settings.startGraceMs,
        settings.reservationGraceMs,
        VISIBILITY_TIMEOUT_MS,
        settings.maxRunMs.appflow,
        settings.maxRunMs.glue,
        settings.backoff.maxSeconds * 1000,
      ) + 1;
    for (const [i, gate] of this.gates.entries()) {
      // Un-paused with room for the heaviest job (weight 2), so that every job can still run. A gate no job created yet
      // is left to its first job (which creates it from configuration, with its start rate).
      if ((await this.world.observe.exists(gate)) && (await this.world.observe.limit(gate)) < 2)
        this.launch({ t: 'setLimit', pool: i, limit: 2, faults: {} });
    }
    // Calls stalled in the last wave stay held while the end phase delivers and ends what it can (no time passes), and
    // go before the clock moves.
    await this.drive(true);
    for (let round = 0; round < DRAIN_ROUNDS; round++) {
      this.bus.push(...this.late.splice(0));
      const visible = this.visible().length;
      if (visible > 0 || this.bus.length > 0) {
        for (let i = 0; i < visible; i++) this.launch({ t: 'deliver', pick: 0, faults: {} });
        for (let i = 0; i < this.bus.length; i++) this.launch({ t: 'event', pick: 0, faults: {} });
        await this.drive(true);
        continue;
      }
      const running = this.running();
      if (running.length > 0) {
        for (const run of running) this.bus.push(this.world.observe.endRun(run, 'succeeded'));
        this.mark(`-- the job APIs end ${running.map((r) => r.executionId).join(', ')} (events on time)`);
        await this.invariants.check();
        continue;
      }
      if (this.stalled.length > 0) {
        await this.releaseStalled();
        continue;
      }
      const queued = this.sqs.filter((m) => m.state === 'queued');
      if (queued.length > 0) {
        this.world.clock.advanceTo(Math.min(...queued.map((m) => m.availableAt)));
        this.mark(`-- clock to t=${this.t()} s (delayed messages due)`);
        continue;
      }
      const before = await this.snapshot();
      this.world.clock.advance(pastEverything);
      this.world.catchUpIndexes?.();
      this.mark(`-- clock to t=${this.t()} s (past every grace period); reconcile`);
      this.launch({ t: 'reconcile', faults: {} });
      await this.drive();
      if (this.sqs.every((m) => m.state === 'deleted') && this.bus.length === 0 && this.running().length === 0) {
        if ((await this.snapshot()) === before) return;
      }
    }
    throw new ExploreViolation('did-not-settle', `still busy after ${DRAIN_ROUNDS} rounds of the end phase: ${await this.snapshot()}`);
  }

  private async snapshot(): Promise<string> {
    const { observe } = this.world;
    const holders = await Promise.all(this.pools.map(async (pool) => `${pool}[${(await observe.holders(pool)).join(',')}]`));
    const jobs = await Promise.all(this.jobIds.map(async (jobId) => `${jobId}:${(await observe.job(jobId))?.state ?? '-'}`));
    const waiters = (await observe.waiters()).map((w) => w.jobId);
    return `holders ${holders.join(' ')}; jobs ${jobs.join(' ')}; waiters [${waiters.join(',')}]`;
  }

  // ---- the report ----------------------------------------------------------------------------------------------------

  private t(): number {
    return (this.world.clock.now() - T0) / 1000;
  }

  private mark(text: string): void {
    this.marks.push({ at: this.released, text });
  }

  /** Every task in the order the scheduler released it, with what it returned, and the world's events between them. */
  renderSchedule(): string {
    const released = this.s.report().filter((item) => item.status !== 'pending');
    const lines: string[] = [];
    let m = 0;
    const flushMarks = (upTo: number) => {
      for (; m < this.marks.length && this.marks[m]!.at <= upTo; m++) lines.push(this.marks[m]!.text);
    };
    released.forEach((item, i) => {
      flushMarks(i);
      const meta = item.metadata!;
      lines.push(`${String(i + 1).padStart(4)}. ${meta.who.padEnd(13)} ${meta.what}${meta.result ? `  -> ${meta.result}` : ''}`);
    });
    flushMarks(Number.POSITIVE_INFINITY);
    const pending = this.s.count();
    if (pending > 0) lines.push(`      (${pending} calls still pending)`);
    return lines.join('\n');
  }
}

function describeFault(fault: CallFault | StartFault): string {
  switch (fault.t) {
    case 'lost':
      return 'answer lost';
    case 'retried':
      return 'applied, answer lost, sent again';
    case 'contended':
      return 'contended: another writer on the counter';
    case 'stall':
      return `stalls (${stallSpan(fault)})`;
    case 'dynamo':
      return `DynamoDB answers ${DYNAMO_CALL_FAULTS[(fault.kind ?? 0) % DYNAMO_CALL_FAULTS.length]}`;
    case 'crash-before':
      return 'dies before this call';
    case 'crash-after':
      return 'dies after this call applied';
    case 'throttle':
      return 'throttled';
    case '5xx':
      return `5xx, ${fault.started ? 'run started' : 'nothing started'}`;
    case 'no-answer':
      return `no answer, ${fault.started ? 'run started' : 'nothing started'}`;
    case 'refused':
      return 'refused for good';
  }
}

export async function runScenario(
  scenario: Scenario,
  scheduler: SchedulerSource,
  ignore: ReadonlySet<ViolationCategory> = new Set(),
  engine: Engine = 'memory',
  limits: Partial<ScheduleLimits> = {},
): Promise<void> {
  await new ExploreRun(scenario, scheduler, ignore, engine, { ...SCHEDULE_LIMITS[engine], ...limits }).run();
}

/** A counter item (`table|POOL#<gate>|POOL`), as DynamoRequest.items names it. */
function isCounter(item: string): boolean {
  const [, pk, sk] = item.split('|');
  return pk !== undefined && pk.startsWith('POOL#') && sk === 'POOL';
}

/** A job record (`table|JOB#<id>|JOB`), as DynamoRequest.items names it. */
function isJob(item: string): boolean {
  return item.split('|')[1]?.startsWith('JOB#') === true;
}

/** A request, short: `dynamodb.TransactWriteItems(POOL#p1, JOB#j1)`. */
function describeRequest(request: DynamoRequest): string {
  const items = request.items.map((item) => item.split('|')[1]).join(', ');
  const key = (request.input.Key ?? {}) as { pk?: { S?: string } };
  const target = items || key.pk?.S || String(request.input.IndexName ?? request.input.KeyConditionExpression ?? '');
  return `dynamodb.${request.operation}(${target})${request.attempt > 1 ? ` attempt ${request.attempt}` : ''}`;
}

// ---- schedulers -----------------------------------------------------------------------------------------------------

/**
 * Makes a fresh scheduler for one run. `pending` is the ids of the tasks waiting, oldest first, kept up to date by the run.
 * - random: fast-check's `fc.scheduler()`, built afresh from a generated seed for every run. (A value of `fc.scheduler()`
 *   itself is not used: its clones share one random stream, so the runs of shrinking and a replay by --path would
 *   each see different choices.) Scenarios shrink; the seed does not.
 * - choices: `fc.schedulerFor` following a generated list of choices: the n-th release takes the pending task at
 *   `choices[n] % pending`, the oldest once the list runs out. Choices shrink towards 0 (the oldest task first: less
 *   interleaving), so the schedule shrinks as well as the scenario.
 */
export interface SchedulerSource {
  make(pending: readonly number[]): fc.Scheduler<TaskMeta>;
  toString(): string;
}

export type SchedulerMode = 'random' | 'choices';

export function schedulerArb(mode: SchedulerMode = 'random'): fc.Arbitrary<SchedulerSource> {
  if (mode === 'random') {
    return fc.noShrink(fc.integer({ min: 0, max: 2 ** 31 - 1 })).map((seed) => ({
      make: () => fc.sample(fc.scheduler<TaskMeta>(), { seed, numRuns: 1 })[0]!,
      toString: () => `fc.scheduler() seeded ${seed}`,
    }));
  }
  return fc.array(fc.nat({ max: 63 }), { maxLength: 400, size: 'max' }).map((choices) => ({
    make: (pending) => {
      const ordering = new Proxy([] as number[], {
        get(target, prop, receiver) {
          if (prop === 'length') return Number.MAX_SAFE_INTEGER;
          const n = typeof prop === 'string' ? Number(prop) : NaN;
          if (!Number.isInteger(n)) return Reflect.get(target, prop, receiver) as unknown;
          return pending[(choices[n] ?? 0) % Math.max(1, pending.length)];
        },
      });
      return fc.schedulerFor<TaskMeta>(ordering);
    },
    toString: () => `choices [${choices.join(',')}]`,
  }));
}

// ---- many scenarios -------------------------------------------------------------------------------------------------

export interface ExploreConfig {
  runs: number;
  seed: number;
  /** fast-check's path of a counterexample: replays it (with the same seed) */
  path?: string;
  scenario?: ScenarioOptions;
  /** stop exploring (and shrinking) after this long */
  timeLimitMs?: number;
  /** add fast-check's own rendering of the scheduler (a schedulerFor`...` template) */
  fcReport?: boolean;
  /** violations of these categories are not reported (to look past known ones) */
  ignore?: readonly ViolationCategory[];
  /** how the order of tasks is chosen (default random: fast-check's fc.scheduler()) */
  scheduler?: SchedulerMode;
  /** the stores: in memory (default), or the DynamoDB adapters on dynalite */
  engine?: Engine;
  /** false: report the first counterexample found, unshrunk */
  shrink?: boolean;
  /** one schedule's bounds (default SCHEDULE_LIMITS[engine]) */
  scheduleLimits?: Partial<ScheduleLimits>;
}

export interface ExploreOutcome {
  ok: boolean;
  runs: number;
  seed: number;
  elapsedMs: number;
  category?: string;
  path?: string;
  shrinks?: number;
  /** what to print */
  text: string;
}

export function exploreProperty(
  options: ScenarioOptions = {},
  ignore: readonly ViolationCategory[] = [],
  mode: SchedulerMode = 'random',
  engine: Engine = 'memory',
  limits: Partial<ScheduleLimits> = {},
) {
  const ignored = new Set(ignore);
  return fc.asyncProperty(scenarioArb(options), schedulerArb(mode), (scenario, scheduler) =>
    runScenario(scenario, scheduler, ignored, engine, limits),
  );
}

export async function explore(config: ExploreConfig): Promise<ExploreOutcome> {
  const started = Date.now();
  const details = await fc.check(exploreProperty(config.scenario, config.ignore, config.scheduler, config.engine, config.scheduleLimits), {
    numRuns: config.runs,
    seed: config.seed,
    ...(config.path !== undefined && { path: config.path, endOnFailure: true }),
    ...(config.shrink === false && { endOnFailure: true }),
    ...(config.timeLimitMs !== undefined && { interruptAfterTimeLimit: config.timeLimitMs }),
  });
  const elapsedMs = Date.now() - started;
  if (!details.failed) {
    const interrupted = details.interrupted ? ` (stopped by the time limit after ${Math.round(elapsedMs / 1000)} s)` : '';
    return {
      ok: true,
      runs: details.numRuns,
      seed: config.seed,
      elapsedMs,
      text: `${details.numRuns} schedules, no violation${interrupted}`,
    };
  }
  const error = details.errorInstance;
  const [scenario] = details.counterexample ?? [];
  const violation = error instanceof ExploreViolation ? error : undefined;
  const replay = `tsx test/support/explore/main.ts ${cliArgs(config)} --seed ${config.seed} --path ${details.counterexamplePath}`;
  const [, scheduler] = details.counterexample ?? [];
  const text = [
    `VIOLATION ${violation?.category ?? '(harness error)'} after ${details.numRuns} schedules (seed ${config.seed}), shrunk ${details.numShrinks} times, ${elapsedMs} ms`,
    `  ${violation?.detail ?? String(error)}`,
    `  replay: ${replay}`,
    '',
    'scenario (shrunk):',
    scenario ? describeScenario(scenario) : '(none)',
    `scheduler: ${String(scheduler)}`,
    '',
    'schedule (each port call, invocation start and job API action, in the order the scheduler released it):',
    violation?.schedule ?? '',
    ...(config.fcReport && violation ? ['', "fast-check's scheduler report:", violation.fcReport] : []),
  ].join('\n');
  return {
    ok: false,
    runs: details.numRuns,
    seed: config.seed,
    elapsedMs,
    category: violation?.category ?? 'unexpected-error',
    path: details.counterexamplePath ?? undefined,
    shrinks: details.numShrinks,
    text,
  };
}

/** The command-line flags that make main.ts explore what `config` explores (for the replay line). */
function cliArgs(config: ExploreConfig): string {
  const o = config.scenario ?? {};
  return [
    o.faults && `--faults ${o.faults.length > 0 ? o.faults.join(',') : 'none'}`,
    o.limitChanges === false && '--no-limit-changes',
    o.limitWeight !== undefined && `--limit-weight ${o.limitWeight}`,
    o.callFaultRarity !== undefined && `--call-fault-rarity ${o.callFaultRarity}`,
    o.kinds && `--kinds ${o.kinds.join(',')}`,
    o.flowControl && '--flow-control',
    o.ratedPools && '--rated-pools',
    config.engine && config.engine !== 'memory' && `--engine ${config.engine}`,
    o.maxJobs !== undefined && `--max-jobs ${o.maxJobs}`,
    o.maxWaves !== undefined && `--max-waves ${o.maxWaves}`,
    o.maxSteps !== undefined && `--max-steps ${o.maxSteps}`,
    config.scheduler && config.scheduler !== 'random' && `--scheduler ${config.scheduler}`,
    config.ignore && config.ignore.length > 0 && `--ignore ${config.ignore.join(',')}`,
    config.scheduleLimits?.maxSteps !== undefined && `--schedule-steps ${config.scheduleLimits.maxSteps}`,
    config.scheduleLimits?.maxMs !== undefined && `--schedule-ms ${config.scheduleLimits.maxMs}`,
  ]
    .filter(Boolean)
    .join(' ');
}

/** The flow-control fields of a job's spec (none for a scenario without them). */
function flowControlOf(job: JobDef): { limits?: string[]; weight?: number; priority?: number; fairnessKey?: string; runSeconds?: number } {
  return {
    ...(job.keys?.length && { limits: job.keys.map(keyName) }),
    ...(job.weight !== undefined && { weight: job.weight }),
    ...(job.priority !== undefined && { priority: job.priority }),
    ...(job.tenant !== undefined && { fairnessKey: `t${job.tenant}` }),
    ...(job.runSeconds !== undefined && { runSeconds: job.runSeconds }),
  };
}
