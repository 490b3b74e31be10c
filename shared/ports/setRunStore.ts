/** What a run of a job set came to: its jobs' final states, by the records (the truth), not by counting. */
export interface SetRunSummary {
  total: number;
  succeeded: number;
  /** failed runs and dead-lettered jobs */
  failed: number;
  /** not yet ended (only in a summary of an open run) */
  open: number;
  /**
   * The first failed jobs' ids, in the set's order: all of them up to MAX_LISTED_FAILED_IDS (shared/domain/jobSets.ts),
   * so that the run's item and its completion event stay within DynamoDB's and EventBridge's size limits. `failed` counts
   * every one; `sluice sets failed` lists them all from the jobs' records.
   */
  failedIds: string[];
}

/** One run of a job set: one fire of its schedule, or one `sluice sets run-now`. */
export interface SetRun {
  set: string;
  run: string;
  total: number;
  /** its jobs' keys (a job's id is `setJobId(set, run, key)`): what the run is checked against, even if the set changed since */
  keys: string[];
  /** ended jobs counted so far: a hint (a job may be counted twice, or missed by an invocation that died) */
  ended: number;
  startedAt: number;
  /** when a job last counted itself on it */
  countedAt?: number;
  /** the time the schedule fired for (absent for a run started by hand) */
  scheduledFor?: number;
  completedAt?: number;
  /** the final summary once completed */
  summary?: SetRunSummary;
  /** when its completion event was put on the bus (then it leaves the open list) */
  notifiedAt?: number;
  /** when its jobs' records were last read to see whether it ended (the reconciler reads an open run now and then) */
  checkedAt?: number;
  /** how many of its jobs that read found still open */
  checkedOpen?: number;
}

/** Where a page of open runs ends: the next page starts after this run (open runs are listed by set, then run). */
export interface OpenRunCursor {
  set: string;
  run: string;
}

/** One page of open runs; `next` is absent on the last page (a page may hold fewer runs than asked, even none). */
export interface OpenRunPage {
  runs: SetRun[];
  next?: OpenRunCursor;
}

/**
 * Runs of job sets, and whether a set is paused. A run is created once (by whichever expander invocation gets there
 * first); jobs that end count themselves on it; it is completed once, when the records of all its jobs are final.
 */
export interface SetRunStore {
  /** Creates the run and lists it as open, in one write; false (changing nothing) when it exists already. */
  startRun(
    run: Omit<SetRun, 'ended' | 'countedAt' | 'completedAt' | 'summary' | 'checkedAt' | 'checkedOpen' | 'notifiedAt'>,
  ): Promise<boolean>;
  /**
   * Counts one ended job on the run at `at`; the run as counted, or undefined if there is no such run. A count made
   * again by the job whose count was the last (a retried request) is not counted twice.
   */
  countEnded(set: string, run: string, jobId: string, at: number): Promise<SetRun | undefined>;
  /** Notes that the run's records were read, and how many of its jobs were still open. */
  markChecked(set: string, run: string, at: number, open: number): Promise<void>;
  /** Completes the run with its summary, once: false if it was completed already (another checker won). */
  complete(set: string, run: string, summary: SetRunSummary, at: number): Promise<boolean>;
  /**
   * Notes that its completion event was sent, and takes it off the open list. The run is done: it is kept as long as
   * a finished job's record, then expires.
   */
  markNotified(set: string, run: string, at: number): Promise<void>;
  getRun(set: string, run: string): Promise<SetRun | undefined>;
  /** The set's runs, newest first. */
  runs(set: string, max: number): Promise<SetRun[]>;
  /**
   * Runs whose completion event was not sent yet, of every set (the reconciler checks them): a page of at most `max`
   * after `after` (from the first without it), ordered by set, then run (by their UTF-8 bytes, as DynamoDB sorts keys).
   */
  openRuns(options?: { after?: OpenRunCursor; max?: number }): Promise<OpenRunPage>;
  setPaused(set: string, paused: boolean): Promise<void>;
  isPaused(set: string): Promise<boolean>;
}
