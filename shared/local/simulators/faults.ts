import { JobKind } from '../../domain/job';
import type { SimErrorName } from './model';

/**
 * Faults of one job kind. Counters (`throttleStarts`, `failStarts.count`, `dropEvents`, `duplicateEvents`,
 * `throttleStatusCalls`) are used up one per call / event; `delayEventsMs` and `startLatencyMs` stay until changed.
 */
export interface KindFaults {
  /** The next n start calls fail with ThrottlingException. */
  throttleStarts: number;
  /** The next `count` start calls fail with `error` (checked after throttleStarts). */
  failStarts?: { count: number; error: SimErrorName; message?: string };
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
}

/**
 * A merge patch for setFaults. Faults are kept per kind. Top-level fields apply to BOTH kinds (each kind gets its own
 * counter: `{ throttleStarts: 2 }` throttles the next 2 AppFlow starts and the next 2 Glue starts); the `appflow` and
 * `glue` fields apply to one kind and win over top-level fields. `failStarts: undefined` clears that fault.
 */
export type FaultPatch = Partial<KindFaults> & { appflow?: Partial<KindFaults>; glue?: Partial<KindFaults> };

export type FaultState = Record<JobKind, KindFaults>;

export const noFaults = (): KindFaults => ({
  throttleStarts: 0,
  dropEvents: 0,
  duplicateEvents: 0,
  delayEventsMs: 0,
  startLatencyMs: 0,
  throttleStatusCalls: 0,
});

const KINDS = [JobKind.AppFlow, JobKind.Glue] as const;

export class Faults {
  private state: FaultState = { appflow: noFaults(), glue: noFaults() };

  set(patch: FaultPatch): void {
    const { appflow, glue, ...common } = patch;
    for (const kind of KINDS) {
      const own = kind === JobKind.AppFlow ? appflow : glue;
      const merged = { ...this.state[kind], ...common, ...own };
      if (merged.failStarts) merged.failStarts = { ...merged.failStarts };
      this.state[kind] = merged;
    }
  }

  clear(): void {
    this.state = { appflow: noFaults(), glue: noFaults() };
  }

  snapshot(): FaultState {
    return structuredClone(this.state);
  }

  of(kind: JobKind): Readonly<KindFaults> {
    return this.state[kind];
  }

  /** Uses up one start-call fault, if any: the error to answer with. */
  takeStartFault(kind: JobKind): { error: SimErrorName; message: string } | undefined {
    const f = this.state[kind];
    if (f.throttleStarts > 0) {
      f.throttleStarts--;
      return { error: 'ThrottlingException', message: 'Rate exceeded' };
    }
    if (f.failStarts && f.failStarts.count > 0) {
      const { error, message } = f.failStarts;
      f.failStarts.count--;
      if (f.failStarts.count === 0) delete f.failStarts;
      return { error, message: message ?? `Simulated ${error}` };
    }
    return undefined;
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
