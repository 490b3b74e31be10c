import type { BackoffPolicy } from '../domain/backoff';
import type { Clock, Random } from '../ports/clock';
import type { JobLedger } from '../ports/jobLedger';
import type { JobQueue } from '../ports/jobQueue';
import type { JobStarters } from '../ports/jobStarter';
import type { LeaseStore } from '../ports/leaseStore';
import type { ScheduleStore } from '../ports/scheduleStore';
import type { EventPublisher } from '../ports/eventPublisher';
import type { OverridePolicy } from '../domain/overridePolicy';
import type { SetRunStore } from '../ports/setRunStore';
import type { JobKind } from '../kinds/registry';

/** The slice of a logger the services use; Powertools' Logger fits it. */
export interface Log {
  debug(message: string, ...extra: Record<string, unknown>[]): void;
  info(message: string, ...extra: Record<string, unknown>[]): void;
  warn(message: string, ...extra: Record<string, unknown>[]): void;
  error(message: string, ...extra: Record<string, unknown>[]): void;
}

/** Counters and durations the services emit; the Powertools adapter turns them into EMF metrics. */
export interface Metrics {
  count(name: MetricName, value?: number, pool?: string): void;
  /** A duration in milliseconds (e.g. HandOffLatency). */
  milliseconds(name: MetricName, value: number, pool?: string): void;
}

export const MetricName = {
  Starts: 'Starts',
  Releases: 'Releases',
  HandOffs: 'HandOffs',
  Parked: 'Parked',
  Retries: 'Retries',
  DeadLettered: 'DeadLettered',
  Duplicates: 'Duplicates',
  ReconciledDrift: 'ReconciledDrift',
  /**
   * runs past their kind's maximum run time that still hold their slot (each reconcile counts each one again): the
   * `run-past-maximum` alarm
   */
  OverdueRuns: 'OverdueRuns',
  /** a job's end could not be announced on the bus (logged with the job) */
  JobEndNotAnnounced: 'JobEndNotAnnounced',
  /** completion events dropped: malformed, or not matching the job the ledger names */
  IgnoredEvents: 'IgnoredEvents',
  /** completions of runs not recorded (yet): mostly runs Sluice did not start, a few that beat their acquirer's record */
  NotedCompletions: 'NotedCompletions',
  /** ms from a waiting job being handed a slot (by the releaser, or its wake-up message's SentTimestamp) to its run started */
  HandOffLatency: 'HandOffLatency',
  /** jobs registered to start later (notBefore), and jobs the loader sent on their way from the due index */
  Scheduled: 'Scheduled',
  Loaded: 'Loaded',
} as const;
export type MetricName = (typeof MetricName)[keyof typeof MetricName];

export interface SluiceSettings {
  /** Pools known without a table entry, with their initial limit. */
  pools: Readonly<Record<string, number>>;
  /**
   * Pools with no concurrency limit (POOLS: "unlimited"): a job of one with no start rate and no keyed limit takes no
   * counter, only its own record (shared/domain/unlimited.ts).
   */
  unlimitedPools?: readonly string[];
  /**
   * The maximum a keyed limit gets when a job first names it, by the key's prefix ("org" for "org:acme"). A key whose
   * prefix has none must be set (`sluice limit set`) before jobs name it; such a job is dead-lettered.
   */
  keyLimits?: Readonly<Record<string, number>>;
  /** Start rates (starts per second) a limit gets when it is created: by pool, by `key/<key>`, or by `key/<prefix>:*`. */
  rates?: Readonly<Record<string, number>>;
  /** What a job may override of what its kind runs (shared/domain/overridePolicy.ts): absent, nothing. */
  overrides?: OverridePolicy;
  backoff: BackoffPolicy;
  /** A job in `starting` longer than this was abandoned by a crashed acquirer and may be resumed. */
  startGraceMs: number;
  /** A reservation not started after this long had its wake-up lost: it is sent again. */
  reservationGraceMs: number;
  /**
   * Longest a run of each kind should take. A run past it that goes on keeps its slot and is reported (OverdueRuns, an
   * alarm, a log line each reconcile); for kinds Sluice judges (callback jobs) it also caps the run's own deadline.
   */
  maxRunMs: Readonly<Record<JobKind, number>>;
  /**
   * Whether a run past its maximum time (and a callback run past its deadline) is asked to stop through the job API;
   * its slot comes back once the API reports it ended.
   */
  stopOverdueRuns: boolean;
  /** How long one reconciler run may spend checking holders; the rest is checked next run. */
  reconcileBudgetMs: number;
  /**
   * How long after a pool's counter began adopting every invocation still on the configuration before the deploy has
   * ended (the acquirer's timeout plus a deploy margin): adopting ends only in a reconciler run whose reads began after
   * it, and an adopting counter is not switched back to unlimited before it (shared/domain/unlimited.ts).
   */
  adoptSettleMs: number;
  /** How many holders the reconciler checks at once (each may call a job API). */
  reconcileConcurrency: number;
  /** Who starts a job a released slot was handed to: the releaser itself (one hop), or the acquirer by a wake-up message. */
  handOffStart: HandOffStart;
}

export const HandOffStart = {
  /** The releaser starts it in the invocation that handed it the slot; the queue only when that fails. */
  Releaser: 'releaser',
  /** A wake-up message through the job queue; the acquirer starts it. */
  Queue: 'queue',
} as const;
export type HandOffStart = (typeof HandOffStart)[keyof typeof HandOffStart];

export interface SluiceDeps {
  leases: LeaseStore;
  ledger: JobLedger;
  /**
   * Jobs that start at a time (notBefore) and cancelling: the functions always have it; models and explorers that run no
   * such job may leave it out (a job with a future notBefore then fails its delivery loudly).
   */
  schedule?: ScheduleStore;
  queue: JobQueue;
  starters: JobStarters;
  clock: Clock;
  random: Random;
  log: Log;
  metrics: Metrics;
  settings: SluiceSettings;
  /** Job sets (shared/app/jobSets.ts): their runs and the bus their completions go to. Absent: no job sets. */
  sets?: JobSetDeps;
  /** Where each job's end is announced (`Sluice Job Ended`, on the stage's bus). Absent: not announced (models). */
  events?: EventPublisher;
}

/** What job sets need beside the core's ports. */
export interface JobSetDeps {
  store: SetRunStore;
  events: EventPublisher;
}

export const silentLog: Log = { debug() {}, info() {}, warn() {}, error() {} };
export const noMetrics: Metrics = { count() {}, milliseconds() {} };
