import type { ServerResponse } from 'node:http';
import type { JobKind } from '../../shared/kinds/registry';
import type { EventContext } from './events';
import type { EventBridgeEvent, RunArgs, SimOutcome, SimRun, SimServiceError } from './model';
import type { RunEngine } from './runEngine';

/** One request to the simulator's server. */
export interface SimRequest {
  method: string | undefined;
  path: string;
  /** The X-Amz-Target header of the JSON protocols, e.g. `AWSGlue.StartJobRun`. */
  target: string | undefined;
  body: string;
}

/** Where a run is: started (or queued), being stopped, or over. */
export type RunPhase = 'running' | 'stopping' | 'ended';

/** A run that ended, with what its end event reports. */
export interface EndedRun {
  run: Readonly<SimRun>;
  outcome: SimOutcome;
  errorMessage?: string;
  recordsProcessed: number;
  bytesProcessed: number;
}

/**
 * One job kind's service, as the simulator plays it: its wire protocol and what differs between services (ids,
 * statuses, end events, idempotency). The run life cycle, faults and records are the RunEngine's, the same for every
 * kind. Each kind's folder has one (`shared/kinds/<kind>/simulator.ts` exports `simulated`).
 */
export interface SimulatedKind {
  readonly kind: JobKind;
  /** Whether the request is one of this service's API calls (by path or X-Amz-Target). */
  serves(req: SimRequest): boolean;
  handle(engine: RunEngine, req: SimRequest, res: ServerResponse): Promise<void>;
  /** Answers with the service's error shape (for failures outside `handle`). */
  sendError(res: ServerResponse, name: string, message: string): void;
  /** The status the service's own API reports in each phase. */
  status(phase: RunPhase, outcome?: SimOutcome): string;
  /**
   * A new run's id, as the service makes them (`clientToken`: the start's token or name, when it names the run; `args`:
   * what the start was given, for ids that name more than the run's name, such as an ECS task's cluster).
   */
  newExecutionId(name: string, ctx: EventContext, clientToken: string | undefined, args: RunArgs): string;
  /** The event the service puts on the default bus when the run ends; undefined when it emits none. */
  endEvent(ctx: EventContext, ended: EndedRun): EventBridgeEvent | undefined;
  /** The error a start with this name gets at once (a name the service's pattern refuses), if any. */
  checkName(name: string): SimServiceError | undefined;
  /** The Sluice job a run belongs to, from what Sluice started it with (a client token, an argument, a name). */
  jobIdOf(run: Pick<SimRun, 'clientToken' | 'args' | 'executionId'>): string | undefined;
  /** The error for a name that does not exist (deleted, or not in options.knownNames). */
  notFound(name: string): SimServiceError;
  /**
   * A start that repeats a client token (or execution name) of an earlier run of the same name: answer with that run
   * (`replay`), start a new one (`new`, e.g. past AppFlow's 8-hour window), or refuse. Kinds without it ignore tokens.
   */
  repeat?(
    engine: RunEngine,
    earlier: { run: Readonly<SimRun>; at: number },
    args: RunArgs,
    callAt: number,
  ): 'replay' | 'new' | SimServiceError;
  /**
   * Events a run sends while it runs (a callback job's system reporting it is alive), every `everyMs(run)` ms from its
   * start until it ends; none when absent or undefined for the run. They go to options.emit like end events but are
   * neither recorded as emitted nor subject to the event faults (those are about end events).
   */
  progress?: {
    everyMs(run: Readonly<SimRun>): number | undefined;
    event(ctx: EventContext, run: Readonly<SimRun>): EventBridgeEvent;
  };
  /** A refusal because too many runs of `name` are in progress (Glue's MaxConcurrentRuns), if any. */
  concurrencyError?(engine: RunEngine, name: string, inProgress: number): SimServiceError | undefined;
}
