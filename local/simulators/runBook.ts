import type { ConcurrencyPoint, SimDroppedEvent, SimEmittedEvent, SimRun, SimStartCall } from './model';

/** What the simulator saw: the proof that a concurrency limit held, independent of the scheduler's own books. */
export interface RunRecords {
  runs: SimRun[];
  startCalls: SimStartCall[];
  emitted: SimEmittedEvent[];
  droppedEvents: SimDroppedEvent[];
}

interface Change {
  t: number;
  seq: number;
  delta: 1 | -1;
}

function changes(runs: readonly SimRun[], group: string | undefined): Change[] {
  const out: Change[] = [];
  for (const run of runs) {
    if (group !== undefined && run.group !== group) continue;
    out.push({ t: run.startedAt, seq: run.startSeq, delta: 1 });
    if (run.endedAt !== undefined) out.push({ t: run.endedAt, seq: run.endSeq ?? Number.MAX_SAFE_INTEGER, delta: -1 });
  }
  // By time; equal times keep the order in which the simulator saw the changes.
  return out.sort((a, b) => a.t - b.t || a.seq - b.seq);
}

/** Runs in progress over time, one point per distinct time (the value after all changes at that time). */
export function concurrencyTimeline(runs: readonly SimRun[], group?: string): ConcurrencyPoint[] {
  const points: ConcurrencyPoint[] = [];
  let inProgress = 0;
  for (const c of changes(runs, group)) {
    inProgress += c.delta;
    const last = points[points.length - 1];
    if (last && last.t === c.t) last.inProgress = inProgress;
    else points.push({ t: c.t, inProgress });
  }
  return points;
}

/** The most runs in progress at once: a run counts from startedAt until endedAt (or now, if it has not ended). */
export function maxConcurrency(runs: readonly SimRun[], group?: string): number {
  let inProgress = 0;
  let max = 0;
  for (const c of changes(runs, group)) {
    inProgress += c.delta;
    if (inProgress > max) max = inProgress;
  }
  return max;
}

/** The simulator's records. Arrays are append-only; readers get copies. */
export class RunBook {
  private records: RunRecords = { runs: [], startCalls: [], emitted: [], droppedEvents: [] };

  addRun(run: SimRun): void {
    this.records.runs.push(run);
  }

  addStartCall(call: SimStartCall): void {
    this.records.startCalls.push(call);
  }

  addEmitted(e: SimEmittedEvent): void {
    this.records.emitted.push(e);
  }

  addDropped(e: SimDroppedEvent): void {
    this.records.droppedEvents.push(e);
  }

  /** The live run objects (the engine mutates them); copy before handing out. */
  liveRuns(): readonly SimRun[] {
    return this.records.runs;
  }

  runs(): SimRun[] {
    return this.records.runs.map((r) => ({ ...r }));
  }

  startCalls(): SimStartCall[] {
    return this.records.startCalls.map((c) => ({ ...c }));
  }

  emitted(): SimEmittedEvent[] {
    return this.records.emitted.map((e) => ({ ...e }));
  }

  droppedEvents(): SimDroppedEvent[] {
    return this.records.droppedEvents.map((e) => ({ ...e }));
  }

  snapshot(): RunRecords {
    return structuredClone(this.records);
  }

  inProgress(): number {
    return this.records.runs.filter((r) => r.endedAt === undefined).length;
  }

  /** Forgets everything except the runs still in progress. */
  clear(): void {
    this.records = { runs: this.records.runs.filter((r) => r.endedAt === undefined), startCalls: [], emitted: [], droppedEvents: [] };
  }
}
