import { InMemorySetRuns, RecordingEvents } from './inMemorySetRuns';
import { sluiceServices } from '../../../shared/app/services';
import { Acquirer } from '../../../shared/app/acquireJob';
import { CompleteRun } from '../../../shared/app/completeRun';
import { HandOffStart, type SluiceDeps, type SluiceSettings } from '../../../shared/app/deps';
import { PoolAdmin } from '../../../shared/app/poolAdmin';
import type { Loader } from '../../../shared/app/loadScheduled';
import { Reconciler } from '../../../shared/app/reconcile';
import type { Random } from '../../../shared/ports/clock';
import { FakeStarter } from './fakeStarter';
import { InMemoryStore } from './inMemoryStore';
import { ManualClock, seededRandom, T0 } from './manualClock';
import { RecordingJobQueue } from './recordingJobQueue';
import { RecordingLog, RecordingMetrics } from './recordingLog';
import { everyKind } from './everyKind';
import type { JobKind } from '../../../shared/kinds/registry';

/** Settings for tests: small pools so parking happens, few attempts so giving up is quick, production grace periods. */
export const TEST_SETTINGS: SluiceSettings = {
  pools: { default: 2 },
  backoff: { baseSeconds: 2, maxSeconds: 900, retryForSeconds: 600 },
  startGraceMs: 90_000,
  reservationGraceMs: 120_000,
  maxRunMs: everyKind(() => 6 * 3600_000, { glue: 48 * 3600_000 }),
  stopOverdueRuns: false,
  reconcileBudgetMs: 60_000,
  adoptSettleMs: 330_000,
  reconcileConcurrency: 4,
  handOffStart: HandOffStart.Releaser,
  // The services' tests run any spec their kind takes; the override policy has tests of its own (overrides.test.ts).
  overrides: {
    glue: { arguments: true },
    ecs: { command: true, environment: true, resources: true, taskRole: true, executionRole: true, network: true },
    batch: { command: true, environment: true, resources: true, parameters: true },
  },
};

export interface FakeWorldOptions {
  settings?: Partial<SluiceSettings>;
  now?: number;
  seed?: number;
  random?: Random;
  /** AppFlow-like idempotent starts for the AppFlow starter (default true, as AppFlowStarter passes a client token) */
  appflowIdempotent?: boolean;
  /** Stops take effect only when a test says so (FakeStarterOptions.asyncStops), as AWS's asynchronous stops. */
  asyncStops?: boolean;
}

export interface FakeWorld {
  deps: SluiceDeps;
  /** the one in-memory table behind both `leases` and `ledger` */
  store: InMemoryStore;
  leases: InMemoryStore;
  ledger: InMemoryStore;
  queue: RecordingJobQueue;
  starters: Record<JobKind, FakeStarter>;
  clock: ManualClock;
  log: RecordingLog;
  metrics: RecordingMetrics;
  settings: SluiceSettings;
  acquirer: Acquirer;
  completeRun: CompleteRun;
  reconciler: Reconciler;
  poolAdmin: PoolAdmin;
  loader: Loader;
  /** job set runs and the events put on the bus */
  setRuns: InMemorySetRuns;
  events: RecordingEvents;
  /** each job's end, as announced (`Sluice Job Ended`) */
  jobEvents: RecordingEvents;
}

/** SluiceDeps built from fakes, and the services built on them. */
export function makeDeps(options: FakeWorldOptions = {}): FakeWorld {
  const settings: SluiceSettings = { ...TEST_SETTINGS, ...options.settings };
  const clock = new ManualClock(options.now ?? T0);
  const store = new InMemoryStore({ retentionDays: 30 });
  const leases = store;
  const ledger = store;
  const queue = new RecordingJobQueue(clock);
  // AppFlow-like (and every other kind, idempotent by a token or a name) unless told otherwise; Glue-like: a new run per start.
  const asyncStops = options.asyncStops ?? false;
  const starters = everyKind((kind) => new FakeStarter(kind, { idempotent: true, clock, asyncStops }), {
    appflow: new FakeStarter('appflow', { idempotent: options.appflowIdempotent ?? true, clock, asyncStops }),
    glue: new FakeStarter('glue', { clock, asyncStops }),
    // A callback job's run id is its token, made from its job id before the start (shared/kinds/callback/token.ts).
    callback: new FakeStarter('callback', { idempotent: true, clock, asyncStops, runIdBeforeStart: true }),
  });
  const log = new RecordingLog();
  const metrics = new RecordingMetrics();
  const setRuns = new InMemorySetRuns();
  const events = new RecordingEvents();
  const jobEvents = new RecordingEvents();
  const deps: SluiceDeps = {
    leases,
    ledger,
    schedule: store,
    queue,
    starters,
    clock,
    random: options.random ?? seededRandom(options.seed ?? 42),
    log,
    metrics,
    settings,
    sets: { store: setRuns, events },
    events: jobEvents,
  };
  return {
    deps,
    store,
    leases,
    ledger,
    queue,
    starters,
    clock,
    log,
    metrics,
    settings,
    setRuns,
    events,
    jobEvents,
    ...sluiceServices(deps),
  };
}

/**
 * A world whose releases start the job a slot goes to by its wake-up message (HandOffStart.Queue), for the tests that
 * follow that message: the reconciler and the acquirer's own releases send it whatever the setting, and the releaser
 * does when it cannot start the job itself. The releaser's one-hop start is tested in releaserStarts.test.ts.
 */
export function makeQueueDeps(options: FakeWorldOptions = {}): FakeWorld {
  return makeDeps({ ...options, settings: { handOffStart: HandOffStart.Queue, ...options.settings } });
}
