import { sluiceServices } from '../../../shared/app/services';
import { Acquirer } from '../../../shared/app/acquireJob';
import { CompleteRun } from '../../../shared/app/completeRun';
import { HandOffStart, type Log, noMetrics, silentLog, type SluiceDeps, type SluiceSettings } from '../../../shared/app/deps';
import { PoolAdmin } from '../../../shared/app/poolAdmin';
import { Reconciler } from '../../../shared/app/reconcile';
import type { RunCompletion, RunOutcome } from '../../../shared/domain/job';
import type { JobState } from '../../../shared/domain/jobState';
import type { JobLedger } from '../../../shared/ports/jobLedger';
import type { JobQueue } from '../../../shared/ports/jobQueue';
import type { JobStarter } from '../../../shared/ports/jobStarter';
import type { LeaseStore } from '../../../shared/ports/leaseStore';
import { FakeStarter, type FakeRun } from '../fakes/fakeStarter';
import { InMemoryStore } from '../fakes/inMemoryStore';
import { ManualClock, seededRandom, T0 } from '../fakes/manualClock';
import { type DeadLetter, RecordingJobQueue, type SentMessage } from '../fakes/recordingJobQueue';
import { defaultKeyLimit, isKeyGate, keyOf } from '../../../shared/domain/limits';
import { everyKind, mapKinds } from '../fakes/everyKind';
import type { JobKind } from '../../../shared/kinds/registry';

/**
 * THE one place where the explored world is wired: fakes, settings, and the services built on them (one in-memory
 * store behind both the lease store and the ledger, as one DynamoDB table is behind both adapters):
 * - `services(wrap)` builds one invocation's services with every port object passed through `wrap` (which intercepts
 *   every method generically, whatever the methods are called);
 * - `observe` is how the checks look at the world: runs from the fake job APIs only, the limit from `getPool(pool).limit`,
 *   and a few read-only views (holders, waiters, ledger states) used by the end-of-run checks.
 */

/** Names the port objects go by in labels (`acquirer#3 ledger.transition(...)`). Starters are named by their kind. */
export type PortName = 'leases' | 'ledger' | 'queue' | JobKind;

export type PortWrapper = <T extends object>(port: T, name: PortName) => T;

export interface ExploreServices {
  acquirer: Acquirer;
  completeRun: CompleteRun;
  reconciler: Reconciler;
  poolAdmin: PoolAdmin;
}

export interface ExploreWorldOptions {
  /** configured pools and their initial limits (created lazily by the first acquire, as in production) */
  pools: Readonly<Record<string, number>>;
  /** configured defaults of keyed limits by prefix (created lazily by the first job naming one) */
  keyLimits?: Readonly<Record<string, number>>;
  /** configured start rates (starts per second) by gate or `key/<prefix>:*` */
  rates?: Readonly<Record<string, number>>;
  settings?: Partial<SluiceSettings>;
  /** seeds deps.random (backoff jitter) */
  seed?: number;
  log?: Log;
  /**
   * How many of the store's calls the holders index lags behind (default HOLDERS_INDEX_LAG_CALLS): DynamoDB reads a
   * global secondary index eventually consistent only (see InMemoryStoreOptions.holdersIndexLagCalls).
   */
  holdersIndexLagCalls?: number;
}

/** The explored world's holders index shows a slot change only this many store calls later. */
export const HOLDERS_INDEX_LAG_CALLS = 2;

/** What the checks read. Nothing here is a port call of the services (no scheduling, no faults). */
export interface Observer {
  /** the limit in force, as the lease store reports it (`getPool(gate).limit`); the configured one before creation */
  limit(gate: string): Promise<number>;
  /** job ids holding (or having reserved) units of the gate (a pool, or a keyed limit `key/<key>`) */
  holders(gate: string): Promise<string[]>;
  /** the units in use the gate's counter says (0 before creation) */
  inUse(gate: string): Promise<number>;
  /** whether the gate's counter exists (created by a job naming it, or by an operator) */
  exists(gate: string): Promise<boolean>;
  /** waiting jobs parked in the store */
  waiters(): Promise<Array<{ pool: string; jobId: string }>>;
  /** the ledger's view of a job */
  job(jobId: string): Promise<{ state: JobState; executionId?: string; startRequested?: boolean } | undefined>;
  /** every run the fake job APIs ever started, both kinds */
  runs(): FakeRun[];
  deadLettered(): DeadLetter[];
  /** messages the services sent since the last call (they become SQS deliveries) */
  takeSent(): SentMessage[];
  /** completion events the job APIs emitted since the last call (a run stopped by the reconciler, a run ended) */
  takeEvents(): RunCompletion[];
  /** the job API ends a run in progress; returns its completion event */
  endRun(run: FakeRun, outcome: RunOutcome): RunCompletion;
}

export interface ExploreWorld {
  clock: ManualClock;
  settings: SluiceSettings;
  /** one invocation's services: every port call goes through `wrap` */
  services(wrap: PortWrapper): ExploreServices;
  observe: Observer;
  /** makes a lease store call meet contention, as a counter that every try lost the race for (in memory only) */
  contend?<T>(call: () => Promise<T>): Promise<T>;
  /** shows every change in the lagging indexes (in memory only): the clock moved past any delay DynamoDB's would have */
  catchUpIndexes?(): void;
}

export const EXPLORE_SETTINGS: Omit<SluiceSettings, 'pools'> = {
  // short backoff so retries come back within a few waves; a short retry budget so giving up happens
  backoff: { baseSeconds: 1, maxSeconds: 8, retryForSeconds: 20 },
  startGraceMs: 90_000,
  reservationGraceMs: 120_000,
  // far above what the waves advance (a few minutes), so no run is overdue before the end
  maxRunMs: everyKind(() => 30 * 60_000, { glue: 45 * 60_000 }),
  stopOverdueRuns: true,
  reconcileBudgetMs: 60_000,
  adoptSettleMs: 330_000,
  reconcileConcurrency: 3,
  handOffStart: HandOffStart.Releaser,
};

export function makeExploreWorld(options: ExploreWorldOptions): ExploreWorld {
  const settings: SluiceSettings = {
    ...EXPLORE_SETTINGS,
    pools: options.pools,
    keyLimits: options.keyLimits ?? {},
    rates: options.rates ?? {},
    ...options.settings,
  };
  const clock = new ManualClock(T0);
  const store = new InMemoryStore({ retentionDays: 30, holdersIndexLagCalls: options.holdersIndexLagCalls ?? HOLDERS_INDEX_LAG_CALLS });
  const leases = store;
  const ledger = store;
  const queue = new RecordingJobQueue();
  // AppFlow-like: a client token derived from the job id makes every start of a job return its first run.
  // Glue-like: a new run per start unless told the job may have started (then it searches for the job's run).
  const starters = everyKind((kind) => new FakeStarter(kind, { idempotent: true, clock }), { glue: new FakeStarter('glue', { clock }) });
  const random = seededRandom(options.seed ?? 8);
  const log = options.log ?? silentLog;

  const services = (wrap: PortWrapper): ExploreServices => {
    const deps: SluiceDeps = {
      leases: wrap<LeaseStore>(leases, 'leases'),
      ledger: wrap<JobLedger>(ledger, 'ledger'),
      queue: wrap<JobQueue>(queue, 'queue'),
      starters: mapKinds(starters, (starter, kind) => wrap<JobStarter>(starter, kind)),
      clock,
      random,
      log,
      metrics: noMetrics,
      settings,
    };
    return sluiceServices(deps);
  };

  const observe: Observer = {
    async limit(gate) {
      const configured = isKeyGate(gate) ? defaultKeyLimit(keyOf(gate), settings.keyLimits ?? {}) : settings.pools[gate];
      return store.peekPool(gate)?.limit ?? configured ?? 0;
    },
    async holders(gate) {
      return store.holdersOfGate(gate);
    },
    async inUse(gate) {
      return store.peekPool(gate)?.inUse ?? 0;
    },
    async exists(gate) {
      return store.peekPool(gate) !== undefined;
    },
    async waiters() {
      return leases.allWaiters().map(({ pool, jobId }) => ({ pool, jobId }));
    },
    async job(jobId) {
      const record = store.peek(jobId);
      return record && { state: record.state, executionId: record.executionId, startRequested: record.startRequested };
    },
    ...fakeObservations(starters, queue),
  };

  const contend = async <T>(call: () => Promise<T>): Promise<T> => {
    // Only this call's body runs while it is set: the scheduler releases one call at a time.
    store.contended = true;
    try {
      return await call();
    } finally {
      store.contended = false;
    }
  };

  return { clock, settings, services, observe, contend, catchUpIndexes: () => store.catchUpHoldersIndex() };
}

/** What the checks read of the fakes every world has: the job APIs' runs and completion events, and the queue. */
export function fakeObservations(
  starters: Record<JobKind, FakeStarter>,
  queue: RecordingJobQueue,
): Pick<Observer, 'runs' | 'deadLettered' | 'takeSent' | 'takeEvents' | 'endRun'> {
  return {
    runs: () => Object.values(starters).flatMap((starter) => [...starter.runs.values()]),
    deadLettered: () => queue.deadLettered,
    takeSent: () => queue.takeSent(),
    takeEvents: () => Object.values(starters).flatMap((starter) => starter.takeEvents()),
    endRun(run, outcome) {
      const starter = starters[run.spec.kind];
      const completion = starter.finish(run.executionId, outcome);
      starter.outbox = starter.outbox.filter((event) => event !== completion);
      return completion;
    },
  };
}
