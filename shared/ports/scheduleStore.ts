import type { JobRecord, Move } from './jobLedger';

/** A job on the due index: enough to read its record (the index carries keys only). */
export interface DueEntry {
  jobId: string;
  dueAt: number;
}

/** One page of a due bucket, and where the next starts. */
export interface DuePage {
  jobs: DueEntry[];
  next?: string;
}

/** Where a job waits when it is cancelled: its waiter item, deleted in the same transaction. */
export interface WaiterRef {
  gate: string;
  waitKey: string;
}

/**
 * Jobs that start at a time, and cancelling jobs before they hold a slot. Records live in the same table as the ledger's
 * (a scheduled job is a job record in state `scheduled`); a job due beyond SQS's 15 minutes also carries its due
 * bucket and sort key, the keys of the sparse due index (shared/domain/notBefore.ts).
 */
export interface ScheduleStore {
  /**
   * Protocol step `schedule`: writes the record (state scheduled) unless the job has one; `index`: the due bucket and
   * sort key that put it on the due index (absent: its delayed copy carries it). False, writing nothing, if it exists.
   */
  schedule(record: JobRecord, index?: { bucket: string; sortKey: string }): Promise<boolean>;
  /** The jobs of one due bucket due at or before `upTo` (epoch ms), a page at a time, in due order. May lag a moment. */
  due(bucket: string, upTo: number, options?: { after?: string; max?: number }): Promise<DuePage>;
  /**
   * Protocol step `load`: scheduled -> queued, fenced by the version read, off the due index (its delayed message was
   * sent before). False, changing nothing, if the record moved since.
   */
  load(move: Move, now: number): Promise<boolean>;
  /** The loader's cursor: the first minute not loaded in full (undefined before the first run). */
  loaderCursor(): Promise<number | undefined>;
  /** Moves the cursor forward to `minute` (never back: two loaders at once may both move it). */
  advanceLoaderCursor(minute: number): Promise<void>;
  /**
   * Protocol step `cancel`: the job (scheduled, queued or waiting, holding no slot) becomes cancelled, fenced by the
   * version read; a waiting job's waiter item is deleted in the same transaction. False, changing nothing, if the
   * record moved since.
   */
  cancel(move: Move, now: number, waiter?: WaiterRef): Promise<boolean>;
}
