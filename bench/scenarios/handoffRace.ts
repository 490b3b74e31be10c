import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoJobLedger } from '../../shared/adapters/dynamodb/jobLedger';
import { DynamoLeaseStore } from '../../shared/adapters/dynamodb/leaseStore';
import { Acquirer } from '../../shared/app/acquireJob';
import { CompleteRun } from '../../shared/app/completeRun';
import { HandOffStart, noMetrics, silentLog, type SluiceDeps, type SluiceSettings } from '../../shared/app/deps';
import { waiterFor } from '../../shared/app/waiters';
import { PROTOCOL } from '../../shared/domain/protocol';
import { systemClock } from '../../shared/ports/clock';
import { moved, registeredRecord } from '../../shared/ports/jobLedger';
import { PassOutcome } from '../../shared/ports/leaseStore';
import { everyKind } from '../../test/support/fakes/everyKind';
import { FakeStarter } from '../../test/support/fakes/fakeStarter';
import { glueJob, messageOf } from '../../test/support/fakes/jobs';
import { seededRandom } from '../../test/support/fakes/manualClock';
import { TEST_SETTINGS } from '../../test/support/fakes/makeDeps';
import { RecordingJobQueue } from '../../test/support/fakes/recordingJobQueue';
import { createSluiceTable } from '../../test/support/table';
import { percentile } from '../metrics';

/**
 * Hand-off races: one pool (limit 1,000, full, a backlog waiting) whose runs end at a set rate, each completion handled
 * by one of many releasers (Lambda containers: each its own services and lease store, one completion at a time), the
 * releaser starting the job it hands the slot to (one hop), as deployed. Sluice's own services on the real DynamoDB
 * adapters; the job API a fake (instant). What is measured at each rate: lost races (pass transactions cancelled
 * because another releaser had just reserved the same waiter) per hand-off and the write units they cost, and the
 * hand-off time (completion handled -> the pass transaction that got through returned).
 */

export interface RaceParams {
  limit: number;
  /** completions per second, each level in turn on the same pool */
  rates: number[];
  /** seconds of completions at each rate (at least minHandoffs of them) */
  seconds: number;
  minHandoffs: number;
  /** releaser containers (Lambda's concurrency for the releaser) */
  releasers: number;
  seed: number;
  /** the widest spread window: 1 is strict head-first (every releaser tries the oldest waiter first) */
  spreadWidth: number;
  /** spread by hand-off tickets (else by the releasing job's id) */
  tickets: boolean;
}

export interface RaceLevel {
  rate: number;
  /** completions per second achieved */
  achievedRate: number;
  handoffs: number;
  lostRaces: number;
  lostRacesPerHandoff: number;
  /**
   * Of those, lost by a releaser with no ticket: one not spreading yet (it had lost no race on the pool in the last
   * minute: each environment's first), or spreading by job id
   */
  lostWithoutTicketPerHandoff: number;
  /** write units of the cancelled transactions per hand-off (2 per item, as DynamoDB bills a transaction's items) */
  cancelledWriteUnitsPerHandoff: number;
  /** hand-off tickets taken per hand-off (one write unit each) */
  ticketsPerHandoff: number;
  /** transactions retried for contention (TransactionConflict on an item another transaction held) per hand-off */
  conflictsPerHandoff: number;
  /** most releasers busy at once */
  maxConcurrent: number;
  handoffP50Ms: number;
  handoffP99Ms: number;
  /** the whole completion, the start of the job let in included */
  completionP50Ms: number;
  completionP99Ms: number;
  /**
   * Every DynamoDB request's round trip during the level, each attempt as the releasers' client saw it (the SDK's
   * retries and their waits apart): the engine's queue, and the bench process's own (its sockets, its event loop).
   * Absent in results from before it was measured.
   */
  callP50Ms?: number;
  callP99Ms?: number;
}

interface Meter {
  cancelledItems: number;
  conflicts: number;
  /** cancelled transactions by which of their items failed (debugging aid: RACE_DEBUG=1 prints it) */
  why: Record<string, number>;
  /** each request attempt's round trip, ms */
  callMs: number[];
}

/** Counts cancelled TransactWriteItems (their items) and contention on the client all releasers share. */
function instrument(client: DynamoDBClient, meter: Meter): void {
  client.middlewareStack.add(
    ((next: (args: unknown) => Promise<unknown>, context: { commandName?: string }) => async (args: { input?: { TransactItems?: unknown[] } }) => {
      try {
        return await next(args);
      } catch (error) {
        if (context.commandName === 'TransactWriteItemsCommand') {
          const reasons = (error as { CancellationReasons?: Array<{ Code?: string }> }).CancellationReasons ?? [];
          if (reasons.some((r) => r.Code === 'ConditionalCheckFailed')) {
            meter.cancelledItems += args.input?.TransactItems?.length ?? 0;
            const key = reasons.map((r) => r.Code ?? '-').join(',');
            meter.why[key] = (meter.why[key] ?? 0) + 1;
          }
          else if (reasons.some((r) => r.Code === 'TransactionConflict')) meter.conflicts++;
        } else if ((error as { name?: string }).name === 'TransactionConflictException') meter.conflicts++;
        throw error;
      }
    }) as never,
    { step: 'initialize', name: 'raceMeter' } as never,
  );
  // Each attempt, below the SDK's retries: its round trip, not the retries' waits.
  client.middlewareStack.add(
    ((next: (args: unknown) => Promise<unknown>) => async (args: unknown) => {
      const started = performance.now();
      try {
        return await next(args);
      } finally {
        meter.callMs.push(performance.now() - started);
      }
    }) as never,
    { step: 'deserialize', name: 'raceCallTimer' } as never,
  );
}

export async function runHandoffRace(
  endpoint: string,
  pool: string,
  p: RaceParams,
  log: (line: string) => void,
): Promise<{ levels: RaceLevel[]; setupSeconds: number }> {
  const client = new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
    requestHandler: { httpAgent: { maxSockets: 256 } },
  });
  const doc = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
  const meter: Meter = { cancelledItems: 0, conflicts: 0, why: {}, callMs: [] };
  instrument(client, meter);
  const table = await createSluiceTable(client, 'race');
  const settings: SluiceSettings = { ...TEST_SETTINGS, pools: { [pool]: p.limit }, handOffStart: HandOffStart.Releaser };
  const starter = new FakeStarter('glue');
  const starters = everyKind((kind) => new FakeStarter(kind, { idempotent: true }), { glue: starter });
  const queue = new RecordingJobQueue();
  const depsOf = (): SluiceDeps => ({
    leases: new DynamoLeaseStore(doc, table, { retentionDays: 30 }),
    ledger: new DynamoJobLedger(doc, table, { retentionDays: 30 }),
    queue,
    starters,
    clock: systemClock,
    random: seededRandom(p.seed),
    log: silentLog,
    metrics: noMetrics,
    settings,
  });

  // ---- setup: the pool full (limit jobs started through the acquirer), then the backlog parked as the acquirer parks
  const setupStarted = Date.now();
  const counts = p.rates.map((rate) => Math.max(p.minHandoffs, Math.round(rate * p.seconds)));
  const backlog = counts.reduce((a, b) => a + b, 0) + 200;
  const setup = depsOf();
  const acquirer = new Acquirer(setup);
  await lanes(32, p.limit, async (i) => {
    const result = await acquirer.process(messageOf(glueJob(`run-${i}`, pool)));
    if (result !== 'started') throw new Error(`run-${i} did not start: ${result}`);
  });
  const firstSeen = Date.now() - backlog;
  await lanes(32, backlog, async (i) => {
    const spec = glueJob(`w-${String(i).padStart(5, '0')}`, pool);
    const now = firstSeen + i;
    const record = registeredRecord(spec, now);
    if (!(await setup.leases.addWaiter(waiterFor(record, pool), moved(record, { jobId: spec.id, version: record.version, to: PROTOCOL.park.to }, now))))
      throw new Error(`parking ${spec.id}: it has a record already`);
  });
  const setupSeconds = (Date.now() - setupStarted) / 1000;
  log(`  ${pool}: ${p.limit} running, ${backlog} waiting (setup ${setupSeconds.toFixed(1)} s)`);

  // ---- the releasers: each a container of its own (its services, its lease store's beliefs, its hand-off memory)
  interface Container {
    completeRun: CompleteRun;
    busySince?: number;
    /** tickets taken during the current completion (debugging aid) */
    tickets?: number;
  }
  let level = { passed: 0, lost: 0, lostHeadFirst: 0, tickets: 0, handoffMs: [] as number[], completionMs: [] as number[] };
  const containers: Container[] = Array.from({ length: p.releasers }, () => {
    const deps = depsOf();
    const own = new Acquirer(deps);
    const container: Container = {} as Container;
    const pass = deps.leases.pass.bind(deps.leases);
    const ticket = deps.leases.handOffTicket.bind(deps.leases);
    deps.leases.handOffTicket = async (gate) => {
      container.tickets = (container.tickets ?? 0) + 1;
      level.tickets++;
      return ticket(gate);
    };
    deps.leases.pass = async (...args) => {
      const outcome = await pass(...args);
      if (outcome === PassOutcome.Passed) {
        level.passed++;
        level.handoffMs.push(Date.now() - container.busySince!);
      }
      // Lost the race: the waiter was reserved by another releaser (and maybe started by it already).
      if (outcome === PassOutcome.TargetGone || outcome === PassOutcome.TargetDone) {
        level.lost++;
        if (!container.tickets) level.lostHeadFirst++;
      }
      return outcome;
    };
    container.completeRun = new CompleteRun(
      deps,
      async (waiter, at, attempt) => {
        await own.startHandedOff(waiter, at, attempt);
      },
      { spreadWidth: p.spreadWidth, tickets: p.tickets },
    );
    return container;
  });
  const idle = [...containers];
  const waitingForIdle: Array<(c: Container) => void> = [];
  const release = (c: Container) => {
    c.busySince = undefined;
    const next = waitingForIdle.shift();
    if (next) next(c);
    else idle.push(c);
  };
  const acquire = () => (idle.length > 0 ? Promise.resolve(idle.shift()!) : new Promise<Container>((r) => waitingForIdle.push(r)));

  // Runs to end, oldest first: the pool's first runs, then the runs of the jobs let in, as they start.
  const claimed = new Set<string>();
  let running: string[] = [];
  const nextRun = (): string | undefined => {
    if (running.length === 0) running = starter.inProgress(pool).map((run) => run.executionId).filter((id) => !claimed.has(id));
    const id = running.shift();
    if (id) claimed.add(id);
    return id;
  };

  const random = seededRandom(p.seed + 1);
  const levels: RaceLevel[] = [];
  for (const [i, rate] of p.rates.entries()) {
    level = { passed: 0, lost: 0, lostHeadFirst: 0, tickets: 0, handoffMs: [], completionMs: [] };
    const m0 = { ...meter };
    meter.why = {};
    meter.callMs = [];
    let busy = 0;
    let maxConcurrent = 0;
    const inFlight: Promise<void>[] = [];
    const started = Date.now();
    let due = started;
    for (let n = 0; n < counts[i]!; n++) {
      due += -Math.log(1 - random()) * (1000 / rate); // Poisson arrivals: runs end independently
      const wait = due - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const execution = nextRun();
      if (!execution) throw new Error('no run left to end: raise the backlog');
      const event = starter.finish(execution, 'succeeded');
      inFlight.push(
        // handled by the Promise.all below; marked handled now, so that a failure before it is reached is not an
        // unhandled rejection that ends the process
        handledLater(async () => {
          const c = await acquire();
          c.busySince = Date.now();
          c.tickets = 0;
          busy++;
          maxConcurrent = Math.max(maxConcurrent, busy);
          try {
            // As Lambda retries an asynchronous invocation that failed (twice): a call the loaded engine dropped
            // (ECONNRESET) fails this try, not the run.
            for (let attempt = 1; ; attempt++) {
              try {
                await c.completeRun.complete(event);
                break;
              } catch (error) {
                if (attempt === 3) throw error;
                log(`    a completion failed (${String(error)}); tried again, as Lambda would`);
              }
            }
            level.completionMs.push(Date.now() - c.busySince);
          } finally {
            busy--;
            release(c);
          }
        }),
      );
    }
    await Promise.all(inFlight);
    const elapsed = (Date.now() - started) / 1000;
    const handoffs = Math.max(1, level.passed);
    const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
    const h = sorted(level.handoffMs);
    const c = sorted(level.completionMs);
    const calls = sorted(meter.callMs);
    const r = (x: number, d = 3) => Math.round(x * 10 ** d) / 10 ** d;
    levels.push({
      rate,
      achievedRate: r(counts[i]! / elapsed, 1),
      handoffs: level.passed,
      lostRaces: level.lost,
      lostRacesPerHandoff: r(level.lost / handoffs),
      lostWithoutTicketPerHandoff: r(level.lostHeadFirst / handoffs),
      cancelledWriteUnitsPerHandoff: r((2 * (meter.cancelledItems - m0.cancelledItems)) / handoffs),
      ticketsPerHandoff: r(level.tickets / handoffs),
      conflictsPerHandoff: r((meter.conflicts - m0.conflicts) / handoffs),
      maxConcurrent,
      handoffP50Ms: r(percentile(h, 50), 1),
      handoffP99Ms: r(percentile(h, 99), 1),
      completionP50Ms: r(percentile(c, 50), 1),
      completionP99Ms: r(percentile(c, 99), 1),
      callP50Ms: r(percentile(calls, 50), 1),
      callP99Ms: r(percentile(calls, 99), 1),
    });
    const l = levels[levels.length - 1]!;
    log(
      `    ${rate}/s: ${l.handoffs} hand-offs, ${l.lostRacesPerHandoff} lost races each (${l.cancelledWriteUnitsPerHandoff} WU), ${l.ticketsPerHandoff} tickets, p50 ${l.handoffP50Ms} ms, p99 ${l.handoffP99Ms} ms, ${l.maxConcurrent} releasers at most; DynamoDB calls p50 ${l.callP50Ms} / p99 ${l.callP99Ms} ms`,
    );
    if (process.env.RACE_DEBUG) log(`      ${level.lostHeadFirst} lost by releasers without a ticket (not spreading yet, or by id); conflicts ${l.conflictsPerHandoff} per hand-off; cancelled: ${JSON.stringify(meter.why)}`);
  }
  client.destroy();
  return { levels, setupSeconds };
}

/** Runs `work(0..count-1)`, `width` at a time. */
async function lanes(width: number, count: number, work: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, count) }, async () => {
      while (next < count) await work(next++);
    }),
  );
}

/** Runs `work` now; its promise is marked handled (whoever awaits it later still sees its rejection). */
function handledLater(work: () => Promise<void>): Promise<void> {
  const promise = work();
  promise.catch(() => undefined);
  return promise;
}
