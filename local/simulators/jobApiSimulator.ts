import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { JobKind } from '../../shared/kinds/registry';
import { sendAppFlowError } from './appflowProtocol';
import { CONTROL_PREFIX, handleControl } from './controlRoutes';
import type { FaultPatch, FaultState } from './faults';
import { readBody } from './http';
import type { ConcurrencyPoint, SimDroppedEvent, SimEmittedEvent, SimRun, SimStartCall } from './model';
import { concurrencyTimeline, maxConcurrency } from './runBook';
import { RunEngine, type RunBehaviour, type RunEngineOptions } from './runEngine';
import type { SimRequest } from './simulatedKind';
import { simulatedKinds } from './simulatedKinds';

export interface JobApiSimulatorOptions extends RunEngineOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0 (any free port). */
  port?: number;
}

/**
 * Every kind's job API (shared/kinds/<kind>/simulator.ts) on one loopback HTTP server, for the real SDK clients: point
 * `endpoint` (or AWS_ENDPOINT_URL_APPFLOW, AWS_ENDPOINT_URL_GLUE, AWS_ENDPOINT_URL_SFN, ...) at `endpoint`. Runs last `durationMs`, end with `outcome`, and emit the EventBridge event AWS
 * would send. Every run, start call and event is recorded with options.now() timestamps.
 */
export interface JobApiSimulator {
  /** `http://127.0.0.1:<port>` */
  readonly endpoint: string;
  /** Merges a fault patch (see FaultPatch: top-level fields apply to both kinds, `appflow` / `glue` to one). */
  setFaults(patch: FaultPatch): void;
  clearFaults(): void;
  /** The faults now in force, with the counters left. */
  faults(): FaultState;
  /** Changes durations, outcomes, Glue MaxConcurrentRuns or the stop delay for runs started from now on. */
  configure(patch: Partial<RunBehaviour>): void;
  /**
   * Deletes a flow / a Glue job: its starts and status calls answer ResourceNotFoundException / EntityNotFoundException
   * from now on. Runs in progress end on time and emit as usual (lose their events with dropEvents). Undone by reset().
   */
  deleteFlow(flowName: string): void;
  deleteJob(jobName: string): void;
  /** As deleteFlow / deleteJob, for any kind (a state machine, a task definition, a job queue). */
  deleteName(kind: JobKind, name: string): void;
  /**
   * Sets the status a run's API reports, without ending it or changing when it ends: a state the simulator does not
   * reach by itself (Glue WAITING or ERROR, queued states). False when there is no such run.
   */
  setStatus(kind: JobKind, executionId: string, status: string): boolean;
  /** Runs in progress now. */
  inProgress(): number;
  /** Max runs in progress at once, from the run timeline; with `group`, only runs options.group labelled so. */
  maxObservedConcurrency(group?: string): number;
  concurrencyTimeline(group?: string): ConcurrencyPoint[];
  runs(): SimRun[];
  startCalls(): SimStartCall[];
  emitted(): SimEmittedEvent[];
  droppedEvents(): SimDroppedEvent[];
  /**
   * Forgets ended runs (the status APIs no longer know them), start calls, events, tokens of forgotten runs, faults
   * and deleted names.
   * Runs in progress go on and end and emit as usual. Options and configure() settings stay.
   */
  reset(): void;
  /** Timers the simulator holds now (run ends, delayed events, start latency): 0 after close(). */
  pendingTimers(): number;
  /** Stops the server, drops its connections and clears every pending timer: no event is emitted afterwards. */
  close(): Promise<void>;
}

export async function startJobApiSimulator(options: JobApiSimulatorOptions = {}): Promise<JobApiSimulator> {
  const kinds = simulatedKinds();
  const engine = new RunEngine(kinds, options);

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    const header = req.headers['x-amz-target'];
    const request: SimRequest = {
      method: req.method,
      path,
      target: typeof header === 'string' ? header : undefined,
      body: await readBody(req),
    };
    if (path.startsWith(CONTROL_PREFIX)) return handleControl(engine, req.method, path, request.body, res);
    const service = kinds.find((k) => k.serves(request));
    if (service) return service.handle(engine, request, res);
    sendAppFlowError(res, 'UnknownOperationException', `The simulator serves no ${req.method} ${path} (target ${String(header)})`);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      if (res.headersSent) res.destroy();
      else sendAppFlowError(res, 'InternalServerException', e instanceof Error ? e.message : String(e));
    });
  });

  // Node closes idle keep-alive connections after 5 s; a client that reuses one just then gets "socket hang up" on a
  // request the job APIs never retry (a start). AWS endpoints keep idle connections far longer: so does the simulator.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { address, port } = server.address() as AddressInfo;
  const host = address.includes(':') ? `[${address}]` : address;
  let closing: Promise<void> | undefined;

  return {
    endpoint: `http://${host}:${port}`,
    setFaults: (patch) => engine.faults.set(patch),
    clearFaults: () => engine.faults.clear(),
    faults: () => engine.faults.snapshot(),
    configure: (patch) => engine.configure(patch),
    deleteFlow: (flowName) => engine.deleteName(JobKind.AppFlow, flowName),
    deleteJob: (jobName) => engine.deleteName(JobKind.Glue, jobName),
    deleteName: (kind, name) => engine.deleteName(kind, name),
    setStatus: (kind, executionId, status) => engine.setStatus(kind, executionId, status),
    inProgress: () => engine.book.inProgress(),
    maxObservedConcurrency: (group) => maxConcurrency(engine.book.liveRuns(), group),
    concurrencyTimeline: (group) => concurrencyTimeline(engine.book.liveRuns(), group),
    runs: () => engine.book.runs(),
    startCalls: () => engine.book.startCalls(),
    emitted: () => engine.book.emitted(),
    droppedEvents: () => engine.book.droppedEvents(),
    reset: () => engine.reset(),
    pendingTimers: () => engine.pendingTimers(),
    close() {
      closing ??= new Promise<void>((resolve, reject) => {
        engine.close();
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
