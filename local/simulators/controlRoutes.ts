import type { ServerResponse } from 'node:http';
import { isJobKind, JobKind } from '../../shared/kinds/registry';
import type { FaultPatch } from './faults';
import { parseObject, sendJson } from './http';
import type { RunEngine, RunBehaviour } from './runEngine';

/**
 * A small JSON control API on the same server, for tests in another process than the simulator:
 *   GET  /__sim/records    -> RunRecords (runs, startCalls, emitted, droppedEvents)
 *   GET  /__sim/faults     -> FaultState
 *   POST /__sim/faults     <- FaultPatch (merged, as setFaults; `failCalls` answers any operation with any error)
 *   POST /__sim/reset      (as reset())
 *   POST /__sim/configure  <- the JSON-able part of RunBehaviour (constant durationMs / outcome, glueMaxConcurrentRuns, stopDelayMs)
 *   POST /__sim/delete-flow <- { "flowName": "..." }  (as deleteFlow())
 *   POST /__sim/delete-job  <- { "jobName": "..." }   (as deleteJob())
 *   POST /__sim/delete-name <- { "kind": "...", "name": "..." }  (as deleteName())
 */
export const CONTROL_PREFIX = '/__sim/';

/** RunBehaviour without the per-run functions: what can cross a process boundary. */
export type JsonRunBehaviour = Partial<{
  durationMs: number;
  outcome: 'succeeded' | 'failed' | 'timeout';
  glueMaxConcurrentRuns: Record<string, number>;
  stopDelayMs: number;
}>;

const json = (res: ServerResponse, status: number, body: unknown) => sendJson(res, status, body, 'application/json');

export function handleControl(engine: RunEngine, method: string | undefined, path: string, body: string, res: ServerResponse): void {
  const route = `${method} ${path.slice(CONTROL_PREFIX.length)}`;
  const input = parseObject(body);
  if (!input) return json(res, 400, { message: 'body must be a JSON object' });
  switch (route) {
    case 'GET records':
      return json(res, 200, engine.book.snapshot());
    case 'GET faults':
      return json(res, 200, engine.faults.snapshot());
    case 'POST faults':
      engine.faults.set(input as FaultPatch);
      return json(res, 200, engine.faults.snapshot());
    case 'POST reset':
      engine.reset();
      return json(res, 200, {});
    case 'POST configure': {
      const patch: Partial<RunBehaviour> = {};
      const b = input as JsonRunBehaviour;
      if (typeof b.durationMs === 'number') patch.durationMs = b.durationMs;
      if (b.outcome === 'succeeded' || b.outcome === 'failed' || b.outcome === 'timeout') patch.outcome = b.outcome;
      if (b.glueMaxConcurrentRuns && typeof b.glueMaxConcurrentRuns === 'object') patch.glueMaxConcurrentRuns = b.glueMaxConcurrentRuns;
      if (typeof b.stopDelayMs === 'number') patch.stopDelayMs = b.stopDelayMs;
      engine.configure(patch);
      return json(res, 200, {});
    }
    case 'POST delete-flow':
    case 'POST delete-job': {
      const field = route === 'POST delete-flow' ? 'flowName' : 'jobName';
      const name = input[field];
      if (typeof name !== 'string' || name === '') return json(res, 400, { message: `${field} must be a non-empty string` });
      engine.deleteName(field === 'flowName' ? JobKind.AppFlow : JobKind.Glue, name);
      return json(res, 200, {});
    }
    case 'POST delete-name': {
      const { kind, name } = input;
      if (typeof kind !== 'string' || !isJobKind(kind) || typeof name !== 'string' || name === '')
        return json(res, 400, { message: 'kind must be a job kind and name a non-empty string' });
      engine.deleteName(kind, name);
      return json(res, 200, {});
    }
    default:
      return json(res, 404, { message: `no control route ${route}` });
  }
}
