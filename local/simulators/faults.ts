import { type JobKind, KINDS } from '../../shared/kinds/registry';
import type { SimErrorName } from './model';

/**
 * A counted start fault. With `namePrefix`, only start calls of flows / jobs whose name begins with it use it up (and
 * fail); others are untouched.
 */
export interface StartFault {
  count: number;
  error: SimErrorName;
  message?: string;
  namePrefix?: string;
}

/**
 * Faults of one job kind. Counters (`throttleStarts`, `failStarts.count`, `failStartsAfterStarting.count`,
 * `dropEvents`, `duplicateEvents`, `throttleStatusCalls`) are used up one per call / event; `delayEventsMs` and
 * `startLatencyMs` stay until changed.
 */
export interface KindFaults {
  /** The next n start calls fail with ThrottlingException. */
  throttleStarts: number;
  /** The next `count` start calls fail with `error` (checked after throttleStarts); nothing starts. */
  failStarts?: StartFault;
  /**
   * The next `count` start calls that create a run create it, then answer `error` all the same (a 5xx such as
   * InternalServerException / InternalServiceException whose request did its work): the run exists, goes on, ends and
   * emits as usual, and the status APIs list it. A call answered from an AppFlow client token creates no run and does
   * not use this up.
   */
  failStartsAfterStarting?: StartFault;
  /** The next n end events are not emitted (the run still ends and the status API shows it). */
  dropEvents: number;
  /** The next n end events are emitted twice (same event id). */
  duplicateEvents: number;
  /** Each end event is emitted this long after the run ended. */
  delayEventsMs: number;
  /** Added before each start call is processed. */
  startLatencyMs: number;
  /** The next n status calls (DescribeFlowExecutionRecords / GetJobRun / GetJobRuns) fail with ThrottlingException. */
  throttleStatusCalls: number;
  /**
   * Any operation's faults, by the API's operation name (`StartFlow`, `DescribeTasks`, `PutEvents`, ...): its next
   * `count` calls answer `error` (any name of the kind's error tables, shared/kinds/<kind>/apiErrors.ts) in the
   * service's own error shape and HTTP status, before the operation does anything (a start call failed this way starts
   * nothing and is not recorded as a start call). `namePrefix` applies to calls that name a flow / job / state machine
   * / function. Merged per operation by setFaults; an operation set to undefined clears its fault.
   */
  failCalls?: Readonly<Record<string, StartFault | undefined>>;
}

/**
 * A merge patch for setFaults. Faults are kept per kind. Top-level fields apply to EVERY kind (each kind gets its own
 * counter: `{ throttleStarts: 2 }` throttles the next 2 AppFlow starts and the next 2 Glue starts, and so on); a field
 * named by a kind (`appflow`, `glue`, `sfn`, ...) applies to that kind and wins over top-level fields.
 * `failStarts: undefined` (or `failStartsAfterStarting: undefined`) clears that fault.
 */
export type FaultPatch = Partial<KindFaults> & { [K in JobKind]?: Partial<KindFaults> };

export type FaultState = Record<JobKind, KindFaults>;

export const noFaults = (): KindFaults => ({
  throttleStarts: 0,
  dropEvents: 0,
  duplicateEvents: 0,
  delayEventsMs: 0,
  startLatencyMs: 0,
  throttleStatusCalls: 0,
});

const allNoFaults = (): FaultState => Object.fromEntries(KINDS.map((k) => [k.kind, noFaults()])) as FaultState;
const isKind = (field: string): boolean => KINDS.some((k) => k.kind === field);

/** Uses up one call of a counted fault that applies to `name`: the error to answer with, and whether it is used up. */
function useUp(fault: StartFault | undefined, name: string): { error: SimErrorName; message: string; spent: boolean } | undefined {
  if (!fault || fault.count <= 0) return undefined;
  if (fault.namePrefix !== undefined && !name.startsWith(fault.namePrefix)) return undefined;
  fault.count--;
  return { error: fault.error, message: fault.message ?? `Simulated ${fault.error}`, spent: fault.count === 0 };
}

function takeCounted(
  f: KindFaults,
  field: 'failStarts' | 'failStartsAfterStarting',
  name: string,
): { error: SimErrorName; message: string } | undefined {
  const taken = useUp(f[field], name);
  if (taken?.spent) delete f[field];
  return taken && { error: taken.error, message: taken.message };
}

/** failCalls merged per operation (`undefined` clears one), each fault copied so the caller's object is never used up. */
function mergeCalls(...patches: Array<KindFaults['failCalls']>): KindFaults['failCalls'] {
  const merged: Record<string, StartFault> = {};
  for (const patch of patches) {
    for (const [operation, fault] of Object.entries(patch ?? {})) {
      if (fault === undefined) delete merged[operation];
      else merged[operation] = { ...fault };
    }
  }
  return Object.keys(merged).length > 0 ? merged : undefined;
}

export class Faults {
  private state: FaultState = allNoFaults();

  set(patch: FaultPatch): void {
    const common = Object.fromEntries(Object.entries(patch).filter(([field]) => !isKind(field))) as Partial<KindFaults>;
    for (const { kind } of KINDS) {
      const own = patch[kind];
      const merged = { ...this.state[kind], ...common, ...own };
      if (merged.failStarts) merged.failStarts = { ...merged.failStarts };
      if (merged.failStartsAfterStarting) merged.failStartsAfterStarting = { ...merged.failStartsAfterStarting };
      const calls = mergeCalls(this.state[kind].failCalls, common.failCalls, own?.failCalls);
      if (calls) merged.failCalls = calls;
      else delete merged.failCalls;
      this.state[kind] = merged;
    }
  }

  clear(): void {
    this.state = allNoFaults();
  }

  snapshot(): FaultState {
    return structuredClone(this.state);
  }

  of(kind: JobKind): Readonly<KindFaults> {
    return this.state[kind];
  }

  /** Uses up one start-call fault, if any (before anything starts): the error to answer with. */
  takeStartFault(kind: JobKind, name = ''): { error: SimErrorName; message: string } | undefined {
    const f = this.state[kind];
    if (f.throttleStarts > 0) {
      f.throttleStarts--;
      return { error: 'ThrottlingException', message: 'Rate exceeded' };
    }
    return takeCounted(f, 'failStarts', name);
  }

  /** Uses up one failStartsAfterStarting, if any applies to `name`: the error to answer a start that created a run with. */
  takeAnswerFault(kind: JobKind, name: string): { error: SimErrorName; message: string } | undefined {
    return takeCounted(this.state[kind], 'failStartsAfterStarting', name);
  }

  /** Uses up one call fault of `operation` (KindFaults.failCalls), if any applies to `name`: the error to answer with. */
  takeCallFault(kind: JobKind, operation: string, name = ''): { error: SimErrorName; message: string } | undefined {
    const f = this.state[kind];
    const calls = f.failCalls as Record<string, StartFault> | undefined;
    const taken = useUp(calls?.[operation], name);
    if (taken?.spent) {
      delete calls![operation];
      if (Object.keys(calls!).length === 0) delete f.failCalls;
    }
    return taken && { error: taken.error, message: taken.message };
  }

  takeStatusThrottle(kind: JobKind): boolean {
    const f = this.state[kind];
    if (f.throttleStatusCalls <= 0) return false;
    f.throttleStatusCalls--;
    return true;
  }

  /** How to deliver the next end event: dropped, or emitted `copies` times after `delayMs`. */
  takeDelivery(kind: JobKind): { drop: true } | { drop: false; copies: 1 | 2; delayMs: number } {
    const f = this.state[kind];
    if (f.dropEvents > 0) {
      f.dropEvents--;
      return { drop: true };
    }
    let copies: 1 | 2 = 1;
    if (f.duplicateEvents > 0) {
      f.duplicateEvents--;
      copies = 2;
    }
    return { drop: false, copies, delayMs: f.delayEventsMs };
  }
}
