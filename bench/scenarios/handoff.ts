import type { SimRun } from '../../local/simulators';
import { driftSince, type Harness, slotsFreedByReconciler, waitUntil } from '../harness';
import { parkDirectly } from '../park';
import { distribution, type Distribution, jobIdOfRun, median, percentile, type ProcessLoad, watchProcess } from '../metrics';
import { type EarlyCompletions, minusPassFailures, type PassFailures, type Tracer } from '../tracer';
import { type BenchJob, logNormalRunTimes, makeJobs, type RunTimes } from '../workload';

export interface HandoffParams {
  pool: string;
  jobs: number;
  limit: number;
  runTimes: RunTimes;
  seed: number;
  /** Hand-offs traced one at a time (limit 1, nothing else running) for the call-by-call profile. */
  traced: number;
  tracePool: string;
  /** The emulators' process, when they run in a child: its CPU use is reported too. */
  emulatorPid?: number;
  timeoutMs: number;
}

/** Where the time of a hand-off goes, each segment measured per hand-off (exact pairing, see RESULTS.md). */
export interface HandoffSegments {
  /** Event put on the bus -> releaser invoked. */
  bus: Distribution;
  /** Releaser invoked -> wake-up SendMessage issued (the releaser's DynamoDB calls before it): hand-offs by the queue. */
  releaser: Distribution;
  /** Releaser invoked -> its own start call reaches the simulator: one-hop hand-offs (handOffStart releaser). */
  releaserStart: Distribution;
  /** SendMessage issued -> a ReceiveMessage of the acquirer's event source returns it. */
  queue: Distribution;
  /** Received -> the start call reaches the simulator (the acquirer's calls before it). */
  acquirer: Distribution;
}

export interface HandoffMeasurement extends Distribution {
  segments: HandoffSegments;
  /** Runs started with no slot handed to them (the first `limit`, straight from the queue). */
  direct: number;
  /** Runs started after waiting whose wake-up no releaser sent (the acquirer's own fill, the reconciler). */
  otherAdmissions: number;
  /** Wake-up messages sent per job handed a slot (0 when the releaser starts the job itself; above 1: sent again). */
  wakeUpsPerHandoff: number;
  /** Hand-offs whose start call the releaser made itself (one hop), of `n`. */
  oneHop: number;
  /**
   * Completion events that came before the acquirer had recorded the run: noted by the releaser, then completed by the
   * acquirer when it recorded the run (see EarlyCompletions). Counted over the group's whole life.
   */
  earlyCompletions: EarlyCompletions;
  /**
   * Hand-offs whose releaser got the slot across with its first pass transaction, and those whose releaser first lost a
   * race for the same waiter to another releaser (its pass was cancelled on the waiting job's record; it then reads that
   * job's record and offers the slot to the next waiter).
   */
  firstTry: Distribution;
  afterLostRace: Distribution;
  /**
   * Slots passed on before the releaser was even invoked with the run's completion event: someone else (the
   * reconciler, finding the run ended) got there first, and the event then found the slot free.
   */
  releasedBeforeEvent: number;
  /** Hand-offs by the number of races their releaser lost before its pass went through ("0": won the first). */
  lostRaces: Record<string, number>;
  /**
   * From the releaser's first pass transaction being issued to its successful one returning: one transaction for a
   * releaser that won at once (`firstTry`), and for one that lost a race the cancelled transaction, the read of the
   * waiting job's record (and a new query if both waiters its first query read were taken) and the next transaction
   * (`afterLostRace`), as the releaser saw them.
   */
  transferPhase: { firstTry: Distribution; afterLostRace: Distribution };
}

export interface ProfileRow {
  phase: string;
  call: string;
  /** Median start, ms after the event reached the bus. */
  atMs: number;
  /** Median duration, ms. */
  ms: number;
  onPath: boolean;
}

export interface HandoffResult extends HandoffMeasurement {
  pool: string;
  jobs: number;
  limit: number;
  runTimes: RunTimes;
  makespanMs: number;
  /**
   * Pass transactions in the load run, how many were cancelled, and why (`reasons.targetGone`: another releaser had
   * reserved the same waiter, a lost race).
   */
  transferWrites: { attempts: number; failed: number; reasons: PassFailures };
  /** Reconciler runs the bench had to ask for because the pool stalled with a slot held once the runs had ended. */
  reconcilerHeals: number;
  /** Slots the (periodic) reconciler freed during the load run: a lost event, a leaked or orphaned slot, an overdue run. */
  reconcilerFreedSlots: number;
  /** Everything the periodic reconciler put right during the load run, by drift. */
  reconcilerDrift: Record<string, number>;
  /** The bench process during the load run. */
  process: ProcessLoad;
  profile: { handoffs: number; runMs: number; totalP50Ms: number; rows: ProfileRow[] };
  /** Latency of each of Sluice's calls during the load run, ms (client side, as the functions see them). */
  callLatency: Record<string, { n: number; p50Ms: number; p99Ms: number }>;
}

/** The first time at or after `t` in a list of times (undefined if none). */
const firstAtOrAfter = (times: readonly number[] | undefined, t: number) => times?.find((x) => x >= t);

/**
 * Pairs each run that was let in with the completion event that freed its slot. The releaser's pass transaction names
 * both jobs (finished -> let in); the finished job's run gives the event, the job let in gives the start call.
 */
export function measureHandoffs(
  runs: readonly SimRun[],
  tracer: Tracer,
  limit: number,
  /** Only hand-offs whose completion event was put on the bus in [from, to] (ms epoch). */
  window?: { from: number; to: number },
): HandoffMeasurement {
  const byJob = new Map<string, SimRun>();
  for (const run of [...runs].sort((a, b) => a.startCallAt - b.startCallAt)) {
    const id = jobIdOfRun(run);
    if (id && !byJob.has(id)) byJob.set(id, run);
  }
  const total: number[] = [];
  const seg = { bus: [] as number[], releaser: [] as number[], releaserStart: [] as number[], queue: [] as number[], acquirer: [] as number[] };
  let unpaired = 0;
  let oneHop = 0;
  let wakeUps = 0;
  const firstTry: number[] = [];
  const afterLostRace: number[] = [];
  const lostRaces: Record<string, number> = {};
  const phase = { firstTry: [] as number[], afterLostRace: [] as number[] };
  for (const [id, run] of byJob) {
    const handOff = tracer.transfers.get(id);
    const fromRun = handOff && byJob.get(handOff.from);
    const event = fromRun && tracer.events.get(fromRun.executionId);
    if (!handOff || !event || run.startCallAt < event.putAt) {
      unpaired++;
      continue;
    }
    if (window && (event.putAt < window.from || event.putAt > window.to)) {
      continue;
    }
    total.push(run.startCallAt - event.putAt);
    const lost = tracer.transferRaceLosses.get(handOff.from) ?? 0;
    (lost > 0 ? afterLostRace : firstTry).push(run.startCallAt - event.putAt);
    lostRaces[String(lost)] = (lostRaces[String(lost)] ?? 0) + 1;
    const firstWrite = tracer.firstTransferAt.get(handOff.from);
    if (firstWrite !== undefined) (lost > 0 ? phase.afterLostRace : phase.firstTry).push(handOff.at - firstWrite);
    wakeUps += tracer.sends.get(id)?.filter((t) => t >= handOff.at - 50).length ?? 0;
    seg.bus.push(event.invokedAt - event.putAt);
    const sendAt = firstAtOrAfter(tracer.sends.get(id), event.invokedAt);
    const receivedAt = sendAt === undefined ? undefined : firstAtOrAfter(tracer.receives.get(id), sendAt);
    if (sendAt === undefined || sendAt > run.startCallAt) {
      // No wake-up before the start: the releaser started the job itself.
      oneHop++;
      seg.releaserStart.push(run.startCallAt - event.invokedAt);
      continue;
    }
    if (receivedAt === undefined || receivedAt > run.startCallAt) continue;
    seg.releaser.push(sendAt - event.invokedAt);
    seg.queue.push(receivedAt - sendAt);
    seg.acquirer.push(run.startCallAt - receivedAt);
  }
  const direct = window ? 0 : Math.min(limit, unpaired);
  let releasedBeforeEvent = 0;
  for (const { from, at } of tracer.transfers.values()) {
    const fromRun = byJob.get(from);
    const event = fromRun && tracer.events.get(fromRun.executionId);
    if (event && event.invokedAt > at) releasedBeforeEvent++;
  }
  return {
    ...distribution(total),
    segments: {
      bus: distribution(seg.bus),
      releaser: distribution(seg.releaser),
      releaserStart: distribution(seg.releaserStart),
      queue: distribution(seg.queue),
      acquirer: distribution(seg.acquirer),
    },
    direct,
    otherAdmissions: window ? 0 : unpaired - direct,
    wakeUpsPerHandoff: total.length ? Math.round((wakeUps / total.length) * 1000) / 1000 : 0,
    oneHop,
    earlyCompletions: tracer.earlyCompletionsOf(runs[0]?.group ?? ''),
    firstTry: distribution(firstTry),
    afterLostRace: distribution(afterLostRace),
    releasedBeforeEvent,
    lostRaces,
    transferPhase: { firstTry: distribution(phase.firstTry), afterLostRace: distribution(phase.afterLostRace) },
  };
}

export function callLatency(opDurations: ReadonlyMap<string, number[]>): HandoffResult['callLatency'] {
  const out: HandoffResult['callLatency'] = {};
  for (const [op, list] of [...opDurations].sort(([a], [b]) => a.localeCompare(b))) {
    const sorted = [...list].sort((a, b) => a - b);
    out[op] = {
      n: sorted.length,
      p50Ms: Math.round(percentile(sorted, 50) * 10) / 10,
      p99Ms: Math.round(percentile(sorted, 99) * 10) / 10,
    };
  }
  return out;
}

export async function runHandoff(h: Harness, p: HandoffParams): Promise<HandoffResult> {
  const group = p.pool;
  const jobs = makeJobs({ group, pool: p.pool, durations: logNormalRunTimes(p.jobs, p.runTimes, p.seed), tag: 'h' });
  h.log(`hand-off: ${p.jobs} jobs, limit ${p.limit}, log-normal runs (median ${p.runTimes.medianMs} ms, sigma ${p.runTimes.sigma})`);
  const stopReconciler = h.reconcileEvery(h.reconcilePeriodMs);
  const t0 = { attempts: h.tracer.transferAttempts, failed: h.tracer.transferFailures, reasons: { ...h.tracer.passFailures } };
  let freed0 = 0;
  let drift0 = new Map<string, number>();
  let load: ProcessLoad | undefined;
  try {
    // Setup: parked as the acquirer parks them, by the bench (see parkDirectly); what is measured starts at the opening.
    await parkDirectly(h, jobs);
    await waitUntil(`${jobs.length} jobs parked`, async () => (await h.leases.countWaiters(p.pool)) >= jobs.length, p.timeoutMs, 200);
    h.tracer.resetOpStats();
    freed0 = slotsFreedByReconciler(h);
    drift0 = new Map(h.reconcilerDrift);
    const watch = watchProcess(p.emulatorPid);
    await h.poolAdmin().setLimit(p.pool, p.limit);
    await h.tracer.waitEnded(group, p.jobs, p.timeoutMs);
    load = watch();
    await h.settle(p.pool);
  } finally {
    stopReconciler();
  }
  const reconcilerFreedSlots = slotsFreedByReconciler(h) - freed0;
  const reconcilerDrift = driftSince(h, drift0);
  const transferWrites = {
    attempts: h.tracer.transferAttempts - t0.attempts,
    failed: h.tracer.transferFailures - t0.failed,
    reasons: minusPassFailures(h.tracer.passFailures, t0.reasons),
  };
  const runs = h.runsOf(group);
  const measured = measureHandoffs(runs, h.tracer, p.limit);
  const callLatencies = callLatency(h.tracer.opDurations);
  const first = Math.min(...runs.map((r) => r.startCallAt));
  const last = Math.max(...runs.map((r) => r.endedAt ?? r.startedAt));
  h.log(
    `  ${measured.n} hand-offs: p50 ${measured.p50Ms} ms, p99 ${measured.p99Ms} ms, max ${measured.maxMs} ms; ${measured.wakeUpsPerHandoff.toFixed(2)} wake-up messages per hand-off, ${transferWrites.failed}/${transferWrites.attempts} passes cancelled (${transferWrites.reasons.targetGone} lost races), ${measured.earlyCompletions.events} early completions (${measured.earlyCompletions.completedByAcquirer} completed by the acquirer), ${reconcilerFreedSlots} slots freed by the reconciler; CPU ${load!.cpuCores} cores, event loop ${load!.eventLoopUtilization} busy`,
  );
  const profile = await traceHandoffs(h, p);
  return {
    ...measured,
    pool: p.pool,
    jobs: p.jobs,
    limit: p.limit,
    runTimes: p.runTimes,
    makespanMs: last - first,
    transferWrites,
    reconcilerHeals: h.healed.get(p.pool) ?? 0,
    reconcilerFreedSlots,
    reconcilerDrift,
    process: load!,
    profile,
    callLatency: callLatencies,
  };
}

/**
 * One hand-off at a time: every job parked in a paused pool, then the pool opened at limit 1, runs of 100 ms. Nothing
 * else runs, so every call between a completion event and the next start call belongs to that hand-off.
 */
async function traceHandoffs(h: Harness, p: HandoffParams): Promise<HandoffResult['profile']> {
  const group = p.tracePool;
  const runMs = 100;
  const durations = Array.from({ length: p.traced + 1 }, () => runMs);
  const jobs: BenchJob[] = makeJobs({ group, pool: p.tracePool, durations, tag: 't', glueEvery: 0 });
  await parkDirectly(h, jobs);
  await waitUntil(`${jobs.length} jobs parked`, async () => (await h.leases.countWaiters(p.tracePool)) >= jobs.length, p.timeoutMs, 200);
  h.tracer.ops = [];
  h.tracer.recording = true;
  try {
    await h.poolAdmin().setLimit(p.tracePool, 1);
    await h.waitEnded(group, jobs.length, p.tracePool, p.timeoutMs);
    await h.settle(p.tracePool);
  } finally {
    h.tracer.recording = false;
  }
  const ops = [...h.tracer.ops].sort((a, b) => a.seq - b.seq);
  h.tracer.ops = [];
  const cells = new Map<string, { phase: string; call: string; order: number; at: number[]; ms: number[]; onPath: boolean }>();
  const add = (phase: string, call: string, order: number, at: number, ms: number, onPath: boolean) => {
    const key = `${phase}|${call}|${order}`;
    let cell = cells.get(key);
    if (!cell) cells.set(key, (cell = { phase, call, order, at: [], ms: [], onPath }));
    cell.at.push(at);
    cell.ms.push(ms);
  };
  const totals: number[] = [];
  const runs = h.runsOf(group);
  const byJob = new Map(runs.map((r) => [jobIdOfRun(r), r] as const));
  for (const run of runs) {
    const id = jobIdOfRun(run)!;
    const handOff = h.tracer.transfers.get(id);
    const fromRun = handOff && byJob.get(handOff.from);
    const event = fromRun && h.tracer.events.get(fromRun.executionId);
    if (!event) continue;
    const t0 = event.putAt;
    const sendAt = firstAtOrAfter(h.tracer.sends.get(id), event.invokedAt);
    const receivedAt = sendAt === undefined ? undefined : firstAtOrAfter(h.tracer.receives.get(id), sendAt);
    // The wake-up and the start call themselves, in the order calls were issued (t0 has millisecond resolution only).
    const sendOp = ops.find((op) => op.op === 'SendMessage' && op.jobId === id && op.t0 >= event.invokedAt);
    const startOp = ops.find((op) => (op.op === 'StartFlow' || op.op === 'StartJobRun') && op.jobId === id);
    if (!startOp) continue;
    // One hop: the releaser made the start call itself, before any wake-up (handOffStart releaser).
    const oneHop = !sendOp || sendOp.seq > startOp.seq;
    if (!oneHop && (sendAt === undefined || receivedAt === undefined)) continue;
    totals.push(run.startCallAt - t0);
    add('bus', 'event delivered, releaser invoked', 0, event.invokedAt - t0, 0, true);
    const counters = new Map<string, number>();
    const order = (phase: string, call: string) => {
      const k = `${phase}|${call}`;
      const n = counters.get(k) ?? 0;
      counters.set(k, n + 1);
      return n;
    };
    // Nothing else runs: calls from the releaser's invocation up to its wake-up are the releaser's (a TransactWriteItems
    // is labelled with its slot change: the releaser's is a pass), calls after the wake-up is received up to the start
    // call are the acquirer's (reading the job, then its claim), except the releaser's own last step (forgetting the
    // waiter item), which runs after its send and is off the path. The acquirer's writes after the start call
    // (recording the run, marking the job running) are off the path too and not listed.
    for (const op of ops) {
      if (oneHop) {
        // Every call from the releaser's invocation to the start call is the releaser's: its pass, then the claim.
        if (op.op !== 'ReceiveMessage' && op.t0 >= event.invokedAt && op.seq <= startOp.seq) {
          const call = `${op.service}.${op.op}${op.item ? ` (${op.item})` : ''}`;
          add('releaser', call, order('releaser', call), op.t0 - t0, op.ms, true);
        }
        continue;
      }
      if (op.op === 'ReceiveMessage') {
        if (op.t1 === receivedAt) add('event source', 'ReceiveMessage returns the wake-up', 0, op.t1 - t0, 0, true);
        continue;
      }
      const call = `${op.service}.${op.op}${op.item ? ` (${op.item})` : ''}`;
      if (op.t0 >= event.invokedAt && op.seq <= sendOp!.seq) add('releaser', call, order('releaser', call), op.t0 - t0, op.ms, true);
      else if (op.seq > sendOp!.seq && op.t0 <= run.startCallAt && op.item === 'WAIT' && op.op === 'DeleteItem')
        add('releaser', call, order('releaser', call), op.t0 - t0, op.ms, false);
      else if (op.t0 >= receivedAt! && op.seq > sendOp!.seq && op.seq <= startOp.seq)
        add('acquirer', call, order('acquirer', call), op.t0 - t0, op.ms, true);
    }
    add('simulator', 'start call arrives', 0, run.startCallAt - t0, 0, true);
  }
  const rows = [...cells.values()]
    .filter((c) => c.at.length >= Math.max(1, totals.length / 2)) // steps most hand-offs take
    .map((c) => ({ phase: c.phase, call: c.call, atMs: round1(median(c.at)), ms: round1(median(c.ms)), onPath: c.onPath }))
    .sort((a, b) => a.atMs - b.atMs || a.phase.localeCompare(b.phase));
  return { handoffs: totals.length, runMs, totalP50Ms: round1(median(totals)), rows };
}

const round1 = (x: number) => Math.round(x * 10) / 10;
