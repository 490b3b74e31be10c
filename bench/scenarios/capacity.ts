import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { poolKey } from '../../shared/adapters/dynamodb/keys';
import type { ReconcileReport } from '../../shared/app/reconcile';
import { type CapacityMeter, type CapacityTotals, emptyTotals, since } from '../capacity';
import { driftSince, type Harness, perJob, type RequestsPerJob, sleep, waitUntil } from '../harness';
import { percentile, type ProcessLoad, watchProcess } from '../metrics';
import {
  benchScope,
  type EarlyCompletions,
  minusEarly,
  minusPassFailures,
  type PassFailures,
  type SlotChange,
  type SlotChangeCounts,
} from '../tracer';
import { makeJobs, uniformRunTimes } from '../workload';
import { callLatency, type HandoffResult, measureHandoffs } from './handoff';

export interface CapacityParams {
  limits: number[];
  /**
   * Jobs at each limit: max(minJobs, jobsPerSlot x limit + extraJobs). The first `limit` get a free slot at the opening
   * and give it back at the end (reserve, free); every other one is handed a slot (pass).
   */
  minJobs: number;
  jobsPerSlot: number;
  extraJobs: number;
  /**
   * Completions per second offered at every limit: each job runs limit x 1000 / offeredJobsPerSecond ms on average (at
   * least minRunMs; drawn uniformly within +-50%, seeded, so the slots do not end in waves), so a full pool of any limit
   * hands slots over at the same rate, and the limits compare at the same load: a design whose per-job cost grew with
   * the limit would cost more per job, or fall behind, at the larger one.
   */
  offeredJobsPerSecond: number;
  minRunMs: number;
  seed: number;
  /** Reconciler runs measured at each limit, with the pool full (its cost per run and per holder). */
  reconcilerRuns: number;
  /** AWS schedule the reconciler's share per job is projected on: a job of jobMinutes is checked jobMinutes / periodMinutes times. */
  jobMinutes: number;
  reconcilePeriodMinutes: number;
  timeoutMs: number;
}

export const jobsAtLimit = (p: Pick<CapacityParams, 'minJobs' | 'jobsPerSlot' | 'extraJobs'>, limit: number) =>
  Math.max(p.minJobs, Math.ceil(p.jobsPerSlot * limit) + p.extraJobs);

export const runMsAtLimit = (p: Pick<CapacityParams, 'offeredJobsPerSecond' | 'minRunMs'>, limit: number) =>
  Math.max(p.minRunMs, Math.round((limit * 1000) / p.offeredJobsPerSecond));

/** Capacity units per job (reported by DynamoDB Local), with the hot-key bounds they give on AWS. */
export interface CapacityAtLimit {
  limit: number;
  jobs: number;
  /** Mean run time, ms (runs drawn within +-50%). */
  runMs: number;
  /**
   * Write and read units per job on the job path: acquire, park, hand-off or reserve, claim, start, record, release.
   * Write units by DynamoDB's rules (a transaction's items 2 units each: see CapacityMeter); `wcuReported` is what
   * DynamoDB Local itself reported (it counts a transaction of small items as one).
   */
  wcu: number;
  wcuReported: number;
  rcu: number;
  /** Of wcu, the holders index's (a slot taken or released puts or deletes its index entry). */
  gsiWcu: number;
  /** Of wcu, the `ended` index's: one entry per job that ends, at the rate of the write that files it. */
  endedWcu: number;
  gsiWcuReported: number;
  /** The most units a plain write of one item reported (1: the items are under 1 KB, as the transactions' rule assumes). */
  largestPlainWriteUnits: number;
  /** Write units per job on the pool counter item, and read units of reads of it. */
  counterWcu: number;
  counterRcu: number;
  /** Write units per job on the pool's partition key: the counter and the waiter items. */
  partitionWcu: number;
  /** Failed writes per job (conditions not met, cancelled transactions), and the units they may cost (see CapacityMeter). */
  failedWrites: number;
  failedWcuEstimate: number;
  /** wcu + failedWcuEstimate: the most AWS could bill per job. */
  wcuWithFailed: number;
  counterWcuWithFailed: number;
  /**
   * Jobs per second one pool can take on AWS before a key is hot: 1,000 write units per second per item (and per
   * partition), over the units per job on the counter item, on the pool's partition key, and on the holders index's key
   * (holderPool = the pool: every holder of a pool has the same index key).
   */
  hotItemJobsPerSecondAws: number;
  hotItemJobsPerSecondAwsWithFailed: number;
  hotPartitionJobsPerSecondAws: number;
  hotIndexKeyJobsPerSecondAws: number;
  /** Start calls per second between the 10th and 90th percentile start, on this machine (DynamoDB Local, fauxqs). */
  jobsPerSecondLocal: number;
  /** All jobs over the time from opening the pool to the last run's end. */
  endToEndJobsPerSecondLocal: number;
  /** How the jobs got their slot: a hand-off (pass), a free slot filled (reserve: the pool opening), a take. */
  admitted: { handedOff: number; reserved: number; taken: number };
  /** Hand-off latency in this run (event put on the bus -> the start call of the job it let in), ms. */
  handoff: { n: number; p50Ms: number; p99Ms: number };
  /** The most jobs/s this limit allows at that latency: limit x 1000 / (run + hand-off p50). */
  limitBoundJobsPerSecond: number;
  earlyCompletions: EarlyCompletions;
  /**
   * Slot-change transactions per job, by kind: tried, cancelled, and cancelled by a conflict with another transaction on
   * one of their items (every slot change has the pool counter in it).
   */
  slotChanges: Record<string, SlotChangeCounts>;
  /** Pass transactions cancelled in this run, by reason (counts, not per job). */
  passFailures: PassFailures;
  /** Per call kind, per job: calls, failed calls, write and read units. */
  byCall: Record<string, { calls: number; failed: number; wcu: number; rcu: number }>;
  /** Requests per job (every service), as the other scenarios count them. */
  requestsPerJob: RequestsPerJob;
  /**
   * The reconciler, apart from the job path: the runs measured with the pool full (units per run, holders checked per
   * run), and its share per job on AWS: a job of `jobMinutes` is checked `jobMinutes / reconcilePeriodMinutes` times,
   * each check its share of a run (run units / holders checked). `healRuns` are runs the bench had to ask for: the pool
   * stalled, or it kept free slots while jobs waited (what the periodic reconciler does on AWS, within 2 minutes); their
   * units are the reconciler's (`wcuPerJobLocal`, `rcuPerJobLocal`: the heals' units in this run, per job), not the job path's.
   */
  reconciler: {
    runs: number;
    holdersPerRun: number;
    /** Units of a measured run, everything it did (with runs this short, it also completes runs it finds ended). */
    wcuPerRun: number;
    rcuPerRun: number;
    /**
     * Its share per job on AWS, from the checking alone: per holder one read of its record, plus the run's fixed reads
     * (the pool registry, the holders index pages, the pool counters) over the holders; checked `jobMinutes /
     * reconcilePeriodMinutes` times. A check writes nothing unless something drifted. The completions a measured run
     * makes here (the runs are 20 ms; on AWS a 20-minute run has its completion event long before) are not in it.
     */
    wcuPerJobAws: number;
    rcuPerJobAws: number;
    healRuns: number;
    /** Of healRuns, those for free slots left while jobs waited (hand-offs and fills that gave up, see idleSlotSeconds). */
    idleSlotHeals: number;
    wcuPerJobLocal: number;
    rcuPerJobLocal: number;
    drift: Record<string, number>;
    /** Calls and units of the measured runs, per run, by call kind. */
    byCallPerRun: Record<string, { calls: number; failed: number; wcu: number; rcu: number }>;
    /**
     * Takes and claims (the acquirer's alone) counted in the reconciler's or the pool admin's scope during the run: 0
     * unless the scope leaked into the functions' calls (see benchScope).
     */
    scopeLeaks: number;
  };
  /**
   * Slot-seconds the pool left free while jobs waited (sampled every 250 ms): a release whose hand-off and fill both gave
   * up (their rounds used up by races for the same waiters) frees a slot that only the reconciler fills again.
   */
  idleSlotSeconds: number;
  process: ProcessLoad;
  /** Latency of Sluice's calls during the run, ms (client side): what sets the local jobs/s. */
  callLatency: HandoffResult['callLatency'];
}

export interface CapacityResult {
  engine: string;
  params: CapacityParams;
  /** Units of one pool-counter item in a transaction on this engine (its share of a slot change's units). */
  unitsPerCounterCheck: number;
  unitsPerCounterUpdate: number;
  byLimit: Record<string, CapacityAtLimit>;
}

export const capacityPool = (limit: number) => `bench-cap-${limit}`;

const r3 = (x: number) => Math.round(x * 1000) / 1000;
const r1 = (x: number) => Math.round(x * 10) / 10;

/**
 * Units of a transaction with the pool counter as its only item, on the engine (ReturnConsumedCapacity): a
 * ConditionCheck that holds, and an Update adding 0. That is the counter item's share of every slot change.
 */
async function calibrateCounter(h: Harness, pool: string): Promise<{ check: number; update: number }> {
  const TableName = h.stack.tableName;
  const units = async (item: Record<string, unknown>) => {
    const out = await h.own.doc.send(new TransactWriteCommand({ TransactItems: [item], ReturnConsumedCapacity: 'TOTAL' }));
    return (out.ConsumedCapacity ?? []).reduce((sum, c) => sum + (c.CapacityUnits ?? 0), 0);
  };
  const check = await units({ ConditionCheck: { TableName, Key: poolKey(pool), ConditionExpression: 'attribute_exists(pk)' } });
  const update = await units({
    Update: { TableName, Key: poolKey(pool), UpdateExpression: 'ADD inUse :zero', ExpressionAttributeValues: { ':zero': 0 } },
  });
  return { check, update };
}

function slotChangesOf(h: Harness): Map<SlotChange, SlotChangeCounts> {
  return new Map([...h.tracer.slotChanges].map(([k, v]) => [k, { ...v }]));
}

/**
 * The same workload at each limit, on the local stack with DynamoDB Local as the engine (it reports consumed capacity):
 * `jobsAtLimit` jobs (runs of `runMsAtLimit`: the same completions per second at every limit) parked in a paused pool through the real path (SQS, acquirer: register, a take that finds the
 * pool full, the waiter, park), then the pool opened at the limit: the first `limit` jobs get a free slot (reserve, by
 * the limit's own fill), every other one a slot handed over by a finishing job (pass), then claim, start, record, and
 * its own release. Every unit Sluice's functions (and the pool admin opening the pool) consume, divided by the jobs, is
 * the job path; the reconciler's units are apart: `reconcilerRuns` runs measured while the pool is full.
 */
export async function runCapacity(h: Harness, meter: CapacityMeter, p: CapacityParams): Promise<CapacityResult> {
  const calibration = await calibrateCounter(h, capacityPool(p.limits[0]!));
  meter.unitsPerCounterCheck = calibration.check;
  meter.unitsPerCounterUpdate = calibration.update;
  h.log(
    `capacity: limits ${p.limits.join(', ')}, ${p.offeredJobsPerSecond} completions/s offered (runs of ${p.limits.map((l) => runMsAtLimit(p, l)).join(', ')} ms), DynamoDB Local; a counter item costs ${calibration.check} units checked, ${calibration.update} updated, in a transaction`,
  );
  const byLimit: Record<string, CapacityAtLimit> = {};
  for (const limit of p.limits) byLimit[String(limit)] = await runAtLimit(h, meter, p, limit);
  return {
    engine: 'DynamoDB Local',
    params: p,
    unitsPerCounterCheck: calibration.check,
    unitsPerCounterUpdate: calibration.update,
    byLimit,
  };
}

async function runAtLimit(h: Harness, meter: CapacityMeter, p: CapacityParams, limit: number): Promise<CapacityAtLimit> {
  const pool = capacityPool(limit);
  const jobs = jobsAtLimit(p, limit);
  const group = pool;
  const runMs = runMsAtLimit(p, limit);
  const durations = uniformRunTimes(jobs, Math.max(p.minRunMs, Math.round(runMs / 2)), Math.round((runMs * 3) / 2), p.seed + limit);
  const workload = makeJobs({ group, pool, durations, tag: 'c' });
  h.log(`capacity, limit ${limit}: parking ${jobs} jobs...`);
  const parkStart = Date.now();
  const units0 = meter.snapshot();
  const requests0 = h.snapshot();
  const changes0 = slotChangesOf(h);
  const early0 = h.tracer.earlyCompletionsOf(group);
  const heals0 = h.healed.get(pool) ?? 0;
  const drift0 = new Map(h.reconcilerDrift);
  const pass0 = { ...h.tracer.passFailures };
  await h.enqueue(workload);
  await waitUntil(`${jobs} jobs parked in ${pool}`, async () => (await h.leases.countWaiters(pool)) >= jobs, p.timeoutMs, 500);
  h.log(`  limit ${limit}: parked in ${((Date.now() - parkStart) / 1000).toFixed(1)} s; pool opened`);

  const watch = watchProcess();
  h.tracer.resetOpStats();
  const opened = Date.now();
  // The pool admin opens the pool: its fill reserves the first `limit` slots (Sluice's writes, counted on the job path).
  let isOpen = false;
  const opening = benchScope.run('poolAdmin', () => h.poolAdmin().setLimit(pool, limit)).finally(() => (isOpen = true));
  opening.catch(() => undefined);
  // Free slots while jobs wait, once the pool admin's fill is done (until then the slots are being filled): sampled;
  // left so for a second, the reconciler is run (as its schedule would, on AWS within 2 minutes), counted as a heal.
  let watching = true;
  let idleSlotMs = 0;
  let idleHeals = 0;
  const watchdog = (async () => {
    let idleSince: number | undefined;
    let last = Date.now();
    while (watching) {
      await sleep(250);
      const now = Date.now();
      const snapshot = isOpen ? await h.leases.getPool(pool).catch(() => undefined) : undefined;
      const waiting =
        snapshot && snapshot.inUse < snapshot.limit ? (await h.leases.oldestWaiters(pool, 1).catch(() => [])).length > 0 : false;
      if (snapshot && waiting) {
        idleSlotMs += (snapshot.limit - snapshot.inUse) * (now - last);
        idleSince ??= now;
        if (now - idleSince > 1000 && watching) {
          idleHeals++;
          h.healed.set(pool, (h.healed.get(pool) ?? 0) + 1);
          await h.reconcileNow();
          idleSince = undefined;
        }
      } else idleSince = undefined;
      last = now;
    }
  })();
  // The reconciler, measured with the pool full: once a quarter of the waiting jobs have been let in, `reconcilerRuns`
  // runs one after another. Three quarters still wait then, so the pool stays full while they run (at 1,000: 525, 35 s
  // at 15 completions/s; a run over 1,000 holders takes seconds on DynamoDB Local).
  const reconcileAt = Math.floor((jobs - limit) / 4);
  const measured: Array<{ report: ReconcileReport; units: CapacityTotals }> = [];
  // A pool with no completion for longer than the longest run has stalled (the harness then runs the reconciler).
  const stallMs = Math.max(2000, Math.round(runMs * 1.5) + 5000);
  await h.waitEnded(group, reconcileAt, pool, p.timeoutMs, stallMs);
  for (let i = 0; i < p.reconcilerRuns; i++) {
    const before = meter.snapshot().get('reconciler');
    const report = await benchScope.run('reconciler', () => h.stack.reconcileNow());
    measured.push({ report, units: since(meter.snapshot().get('reconciler'), before) });
    for (const [drift, n] of Object.entries(report.drift)) h.reconcilerDrift.set(drift, (h.reconcilerDrift.get(drift) ?? 0) + (n ?? 0));
  }
  await h.waitEnded(group, jobs, pool, p.timeoutMs, stallMs);
  watching = false;
  await watchdog;
  await opening;
  const load = watch();
  const runs = h.runsOf(group);
  const lastEnd = Math.max(...runs.map((r) => r.endedAt ?? r.startedAt));
  await h.settle(pool);

  const units1 = meter.snapshot();
  const job = since(units1.get('functions'), units0.get('functions'));
  const admin = since(units1.get('poolAdmin'), units0.get('poolAdmin'));
  const reconcilerAll = since(units1.get('reconciler'), units0.get('reconciler'));
  const measuredUnits = measured.reduce((sum, m) => ({ wcu: sum.wcu + m.units.wcu, rcu: sum.rcu + m.units.rcu }), { wcu: 0, rcu: 0 });
  const acquirerOnly = (t: CapacityTotals) =>
    (t.byCall['TransactWriteItems take']?.calls ?? 0) + (t.byCall['TransactWriteItems claim']?.calls ?? 0);
  const scopeLeaks = acquirerOnly(admin) + acquirerOnly(reconcilerAll);
  const path = sum(job, admin);
  const per = (x: number) => r3(x / jobs);
  const changes1 = slotChangesOf(h);
  const slotChanges: CapacityAtLimit['slotChanges'] = {};
  for (const [kind, now] of changes1) {
    const before = changes0.get(kind) ?? { tried: 0, cancelled: 0, conflicts: 0 };
    if (now.tried > before.tried)
      slotChanges[kind] = {
        tried: per(now.tried - before.tried),
        cancelled: per(now.cancelled - before.cancelled),
        conflicts: per(now.conflicts - before.conflicts),
      };
  }
  const succeeded = (kind: SlotChange) => {
    const now = changes1.get(kind) ?? { tried: 0, cancelled: 0, conflicts: 0 };
    const before = changes0.get(kind) ?? { tried: 0, cancelled: 0, conflicts: 0 };
    return now.tried - now.cancelled - (before.tried - before.cancelled);
  };
  const starts = runs.map((r) => r.startCallAt).sort((a, b) => a - b);
  const t10 = percentile(starts, 10);
  const t90 = percentile(starts, 90);
  const steady = t90 > t10 ? (0.8 * starts.length) / ((t90 - t10) / 1000) : 0;
  const handoffs = measureHandoffs(runs, h.tracer, limit);
  const wcu = per(path.wcu);
  const counterWcu = per(path.counterWcu);
  const counterWcuWithFailed = per(path.counterWcu + path.failedCounterWcuEstimate);
  const partitionWcu = per(path.counterWcu + path.waiterWcu);
  const gsiWcu = per(path.gsiWcu);
  const bound = (units: number) => (units > 0 ? Math.round(1000 / units) : 0);
  const reconcilerRuns = measured.length;
  const holdersPerRun = reconcilerRuns ? r1(measured.reduce((s, m) => s + m.report.holdersChecked, 0) / reconcilerRuns) : 0;
  const wcuPerRun = reconcilerRuns ? r3(measured.reduce((s, m) => s + m.units.wcu, 0) / reconcilerRuns) : 0;
  const rcuPerRun = reconcilerRuns ? r3(measured.reduce((s, m) => s + m.units.rcu, 0) / reconcilerRuns) : 0;
  const checks = p.jobMinutes / p.reconcilePeriodMinutes;
  const byCallPerRun = perRunByCall(measured.map((m) => m.units));
  // The checking alone: one record read per holder and the index pages that list them (a run locally may stop at its
  // time budget before the last holder: per holder checked), plus the run's reads per pool (the registry, the
  // counters) shared by the pool's `limit` holders (on AWS a run checks them all).
  const recordRead = byCallPerRun['GetItem JOB'];
  const unitsPerRecordRead = recordRead && recordRead.calls > 0 ? recordRead.rcu / recordRead.calls : 1;
  const indexRcuPerRun = byCallPerRun['Query holders']?.rcu ?? 0;
  const perPoolRcuPerRun = ['Query POOLS', 'GetItem POOL'].reduce((sum, k) => sum + (byCallPerRun[k]?.rcu ?? 0), 0);
  const checkRcuPerJob =
    holdersPerRun > 0 ? r3(checks * (unitsPerRecordRead + indexRcuPerRun / holdersPerRun + perPoolRcuPerRun / limit)) : 0;
  const result: CapacityAtLimit = {
    limit,
    jobs,
    runMs,
    wcu,
    wcuReported: per(path.wcuReported),
    rcu: per(path.rcu),
    gsiWcu,
    endedWcu: per(path.endedWcu),
    gsiWcuReported: per(path.gsiWcuReported),
    largestPlainWriteUnits: Math.max(job.largestPlainWriteUnits, admin.largestPlainWriteUnits),
    counterWcu,
    counterRcu: per(path.counterRcu),
    partitionWcu,
    failedWrites: per(path.failedWrites),
    failedWcuEstimate: per(path.failedWcuEstimate),
    wcuWithFailed: per(path.wcu + path.failedWcuEstimate),
    counterWcuWithFailed,
    hotItemJobsPerSecondAws: bound(counterWcu),
    hotItemJobsPerSecondAwsWithFailed: bound(counterWcuWithFailed),
    hotPartitionJobsPerSecondAws: bound(partitionWcu),
    hotIndexKeyJobsPerSecondAws: bound(gsiWcu),
    jobsPerSecondLocal: Math.round(steady),
    endToEndJobsPerSecondLocal: Math.round(starts.length / Math.max(0.001, (lastEnd - opened) / 1000)),
    admitted: { handedOff: succeeded('pass'), reserved: succeeded('reserve'), taken: succeeded('take') },
    handoff: { n: handoffs.n, p50Ms: handoffs.p50Ms, p99Ms: handoffs.p99Ms },
    limitBoundJobsPerSecond: handoffs.n ? Math.round((limit * 1000) / (runMs + handoffs.p50Ms)) : 0,
    earlyCompletions: minusEarly(h.tracer.earlyCompletionsOf(group), early0),
    slotChanges,
    passFailures: minusPassFailures(h.tracer.passFailures, pass0),
    byCall: Object.fromEntries(
      Object.entries(path.byCall)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([label, c]) => [label, { calls: per(c.calls), failed: per(c.failed), wcu: per(c.wcu), rcu: per(c.rcu) }]),
    ),
    requestsPerJob: perJob(requests0, h.snapshot(), jobs),
    reconciler: {
      runs: reconcilerRuns,
      holdersPerRun,
      wcuPerRun,
      rcuPerRun,
      wcuPerJobAws: 0,
      rcuPerJobAws: checkRcuPerJob,
      healRuns: (h.healed.get(pool) ?? 0) - heals0,
      idleSlotHeals: idleHeals,
      // All the reconciler's units in this run but the measured runs': the heals.
      wcuPerJobLocal: per(reconcilerAll.wcu - measuredUnits.wcu),
      rcuPerJobLocal: per(reconcilerAll.rcu - measuredUnits.rcu),
      drift: driftSince(h, drift0),
      byCallPerRun,
      scopeLeaks,
    },
    idleSlotSeconds: r1(idleSlotMs / 1000),
    process: load,
    callLatency: callLatency(h.tracer.opDurations),
  };
  const conflicts = Object.values(slotChanges).reduce((n, c) => n + c.conflicts, 0);
  h.log(
    `  limit ${limit}: slot changes per job ${Object.entries(slotChanges)
      .map(([k, c]) => `${k} ${c.tried} (${c.cancelled} cancelled, ${c.conflicts} by conflicts)`)
      .join(', ')}; ${r3(conflicts)} conflicts per job`,
  );
  h.log(
    `  limit ${limit}: ${result.wcu} WCU (DynamoDB Local reported ${result.wcuReported}) + ${result.rcu} RCU per job (counter ${counterWcu} WCU: ${result.hotItemJobsPerSecondAws} jobs/s per pool on AWS; failed writes ${result.failedWrites} per job, up to ${result.failedWcuEstimate} WCU more); ${result.jobsPerSecondLocal} jobs/s here (${result.admitted.handedOff} hand-offs, p50 ${result.handoff.p50Ms} ms); reconciler ${wcuPerRun} WCU + ${rcuPerRun} RCU per run over ${holdersPerRun} holders; CPU ${load.cpuCores} cores, event loop ${load.eventLoopUtilization} busy`,
  );
  return result;
}

function perRunByCall(runs: CapacityTotals[]): CapacityAtLimit['reconciler']['byCallPerRun'] {
  const out: CapacityAtLimit['reconciler']['byCallPerRun'] = {};
  const n = Math.max(1, runs.length);
  for (const run of runs)
    for (const [label, c] of Object.entries(run.byCall)) {
      const cell = (out[label] ??= { calls: 0, failed: 0, wcu: 0, rcu: 0 });
      cell.calls = r3(cell.calls + c.calls / n);
      cell.failed = r3(cell.failed + c.failed / n);
      cell.wcu = r3(cell.wcu + c.wcu / n);
      cell.rcu = r3(cell.rcu + c.rcu / n);
    }
  return out;
}

function sum(a: CapacityTotals, b: CapacityTotals): CapacityTotals {
  const out = emptyTotals();
  for (const key of Object.keys(out) as Array<keyof CapacityTotals>) {
    if (key === 'byCall') continue;
    (out[key] as number) = r3((a[key] as number) + (b[key] as number));
  }
  out.largestPlainWriteUnits = Math.max(a.largestPlainWriteUnits, b.largestPlainWriteUnits);
  for (const source of [a, b])
    for (const [label, c] of Object.entries(source.byCall)) {
      const cell = (out.byCall[label] ??= { calls: 0, failed: 0, wcu: 0, rcu: 0 });
      cell.calls += c.calls;
      cell.failed += c.failed;
      cell.wcu = r3(cell.wcu + c.wcu);
      cell.rcu = r3(cell.rcu + c.rcu);
    }
  return out;
}
