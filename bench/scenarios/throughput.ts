import { DeleteCommand, PutCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { poolKey } from '../../shared/adapters/dynamodb/keys';
import { type Harness, perJob, type RequestsPerJob, sleep, slotsFreedByReconciler } from '../harness';
import { percentile, watchProcess } from '../metrics';
import { type EarlyCompletions, minusEarly } from '../tracer';
import { makeJobs } from '../workload';

export interface ThroughputParams {
  pool: string;
  jobs: number;
  limit: number;
  /**
   * Run time, ms: 0, zero-length runs. Most then end before the acquirer's write of the run record, so their completion
   * events come early: noted by the releaser and completed by the acquirer when it records the run (earlyCompletions).
   */
  runMs: number;
  /** Seconds of the hot-item probe (take- and free-shaped transactions on one counter item, many in flight). */
  hotItemSeconds: number;
  hotItemConcurrency: number;
  /** The emulators' process, when they run in a child: its CPU use is reported too. */
  emulatorPid?: number;
  timeoutMs: number;
}

export interface ThroughputResult {
  jobs: number;
  limit: number;
  runMs: number;
  /** Completion events that came before the acquirer had recorded the run: noted, then completed by the acquirer. */
  earlyCompletions: EarlyCompletions;
  /** Reconciler runs the bench had to ask for because the pool stalled with a slot held (0: no slot waited for it). */
  reconcilerRuns: number;
  /** Slots those reconciler runs freed. */
  reconcilerFreedSlots: number;
  /** Start calls per second between the 10th and 90th percentile start (steady state). */
  jobsPerSecond: number;
  /** Jobs over the time from the first start call to the pool being empty again, all included. */
  endToEndJobsPerSecond: number;
  /**
   * Most slots held at once (sampled) and the largest size of the pool item seen: a counter (limit, inUse), the same
   * size whatever the slots held (the slots are leases on the job records).
   */
  maxInUse: number;
  maxPoolItemBytes: number;
  /**
   * Writes per job to the pool counter item, cancelled ones included: every slot-change transaction has the counter in
   * it, as an Update (take, free, reserve: `poolItemUpdatesPerJob`) or a ConditionCheck (pass, claim:
   * `poolItemChecksPerJob`; DynamoDB bills a ConditionCheck as a write); plus plain writes of a limit. And to its waiter items.
   */
  poolItemWritesPerJob: number;
  poolItemUpdatesPerJob: number;
  poolItemChecksPerJob: number;
  waiterWritesPerJob: number;
  poolPartitionReadsPerJob: number;
  /**
   * Transactions per second that write one counter item on the emulator (take- and free-shaped: the counter's Update and
   * a job item's, `hotItemConcurrency` in flight).
   */
  emulatorHotItemWritesPerSecond: number;
  /** What the hot item alone would allow on the emulator: its write rate over the pool-item writes per job. */
  emulatorHotItemBoundJobsPerSecond: number;
  /**
   * On AWS: 1,000 write units per second per item (and partition), over the write units per job on the counter. Each
   * counter write here is one item of a transaction: 2 units per KB of the item (the counter is under 1 KB), a
   * ConditionCheck billed as a write (the capacity scenario measures these units on DynamoDB Local).
   */
  awsHotItemBoundJobsPerSecond: number;
  /** Write units per job on the counter item, by DynamoDB's rules for the writes counted. */
  awsPoolItemWriteUnitsPerJob: number;
  /** Every request per job during the run (the pool settling at the end included). */
  requestsPerJob: RequestsPerJob;
  /**
   * CPU use during the run, in cores (1.0 = one core busy all the time), and the bench process's main thread: its
   * event-loop utilization (1: saturated) and how late it ran a timer, p99.
   */
  cpu: { benchProcess: number; emulatorProcess?: number; cores: number; eventLoopUtilization: number; eventLoopDelayP99Ms: number };
}

export async function runThroughput(h: Harness, p: ThroughputParams, cores: number): Promise<ThroughputResult> {
  const hot = await hotItemRate(h, p.hotItemSeconds, p.hotItemConcurrency);
  h.log(
    `throughput: hot item takes ${Math.round(hot)} counter transactions/s on the emulator; ${p.jobs} runs of ${p.runMs} ms through one pool of limit ${p.limit}...`,
  );
  const jobs = makeJobs({ group: p.pool, pool: p.pool, durations: Array.from({ length: p.jobs }, () => p.runMs), tag: 'x' });
  const empty = { itemWrites: 0, counterUpdates: 0, counterChecks: 0, waiterWrites: 0, reads: 0, failedItemWrites: 0 };
  const partition0 = { ...(h.tracer.partitions.get(p.pool) ?? empty) };
  let maxInUse = 0;
  let maxPoolItemBytes = 0;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const pool = await h.leases.getPool(p.pool).catch(() => undefined);
      if (pool && pool.inUse >= maxInUse) {
        maxInUse = pool.inUse;
        // The item as stored (its key too), not the snapshot: a write's cost depends on the item's size (a counter: it
        // stays the same whatever the slots held).
        const item = { ...poolKey(p.pool), limit: pool.limit, inUse: pool.inUse };
        maxPoolItemBytes = Math.max(maxPoolItemBytes, JSON.stringify(item).length);
      }
      await sleep(100);
    }
  })();
  const before = h.snapshot();
  const early0 = h.tracer.earlyCompletionsOf(p.pool);
  const heals0 = h.healed.get(p.pool) ?? 0;
  const freed0 = slotsFreedByReconciler(h);
  const watch = watchProcess(p.emulatorPid);
  const wall0 = Date.now();
  try {
    await h.enqueue(jobs);
    await h.waitEnded(p.pool, p.jobs, p.pool, p.timeoutMs);
    await h.settle(p.pool);
  } finally {
    sampling = false;
    await sampler;
  }
  const wallMs = Date.now() - wall0;
  const requestsPerJob = perJob(before, h.snapshot(), p.jobs);
  const load = watch();
  const starts = h
    .runsOf(p.pool)
    .map((r) => r.startCallAt)
    .sort((a, b) => a - b);
  const t10 = percentile(starts, 10);
  const t90 = percentile(starts, 90);
  const steady = t90 > t10 ? (0.8 * starts.length) / ((t90 - t10) / 1000) : 0;
  const endToEnd = starts.length / ((wall0 + wallMs - starts[0]!) / 1000);
  const partition = h.tracer.partitions.get(p.pool) ?? empty;
  const per = (n: number) => Math.round((n / p.jobs) * 1000) / 1000;
  const itemWrites = per(partition.itemWrites - partition0.itemWrites);
  const inTransactions = partition.counterUpdates - partition0.counterUpdates + (partition.counterChecks - partition0.counterChecks);
  const plainWrites = partition.itemWrites - partition0.itemWrites - inTransactions;
  // A write costs one unit per KB of the larger of the item's old and new versions; in a transaction, two.
  const kb = Math.max(1, Math.ceil(maxPoolItemBytes / 1024));
  const unitsPerJob = per(inTransactions * 2 * kb + plainWrites * kb);
  const result: ThroughputResult = {
    jobs: p.jobs,
    limit: p.limit,
    runMs: p.runMs,
    earlyCompletions: minusEarly(h.tracer.earlyCompletionsOf(p.pool), early0),
    reconcilerRuns: (h.healed.get(p.pool) ?? 0) - heals0,
    reconcilerFreedSlots: slotsFreedByReconciler(h) - freed0,
    jobsPerSecond: Math.round(steady),
    endToEndJobsPerSecond: Math.round(endToEnd),
    maxInUse,
    maxPoolItemBytes,
    poolItemWritesPerJob: itemWrites,
    poolItemUpdatesPerJob: per(partition.counterUpdates - partition0.counterUpdates),
    poolItemChecksPerJob: per(partition.counterChecks - partition0.counterChecks),
    waiterWritesPerJob: per(partition.waiterWrites - partition0.waiterWrites),
    poolPartitionReadsPerJob: per(partition.reads - partition0.reads),
    emulatorHotItemWritesPerSecond: Math.round(hot),
    emulatorHotItemBoundJobsPerSecond: itemWrites > 0 ? Math.round(hot / itemWrites) : 0,
    awsHotItemBoundJobsPerSecond: unitsPerJob > 0 ? Math.round(1000 / unitsPerJob) : 0,
    awsPoolItemWriteUnitsPerJob: unitsPerJob,
    requestsPerJob,
    cpu: {
      benchProcess: load.cpuCores,
      ...(load.emulatorCpuCores !== undefined ? { emulatorProcess: load.emulatorCpuCores } : {}),
      cores,
      eventLoopUtilization: load.eventLoopUtilization,
      eventLoopDelayP99Ms: load.eventLoopDelayP99Ms,
    },
  };
  h.log(
    `  ${result.jobsPerSecond} jobs/s steady (${result.endToEndJobsPerSecond} end to end), ${itemWrites} pool-item writes per job, at most ${maxInUse} slots held; ${result.earlyCompletions.events} early completions (${result.earlyCompletions.completedByAcquirer} completed by the acquirer), ${result.reconcilerRuns} reconciler runs needed; CPU: bench ${result.cpu.benchProcess}, emulators ${result.cpu.emulatorProcess ?? '?'} cores, event loop ${result.cpu.eventLoopUtilization} busy`,
  );
  return result;
}

/**
 * The emulator's ceiling for one hot item: a pool counter of its own in Sluice's table (not registered, so the
 * reconciler never sees it), `concurrency` loops each taking and giving back a slot the way the lease store does: a
 * take-shaped TransactWriteItems (the counter's conditional +1 and an Update of the loop's own item) then a free-shaped
 * one (-1 and the same item), for `seconds` after a warm-up. The loops' items are not job records (pk PROBE#...).
 */
async function hotItemRate(h: Harness, seconds: number, concurrency: number): Promise<number> {
  const pool = `bench-hot-probe-${Date.now()}`;
  const TableName = h.stack.tableName;
  const probeKey = (worker: number) => ({ pk: `PROBE#${pool}#${worker}`, sk: 'PROBE' });
  // A raw Put, not createPool: that would register the pool.
  await h.own.doc.send(new PutCommand({ TableName, Item: { ...poolKey(pool), limit: 1000, inUse: 0 } }));
  try {
    const loop = async (worker: number, until: number) => {
      let n = 0;
      for (let i = 0; Date.now() < until; i++) {
        for (const [delta, condition] of [
          [1, 'inUse < #limit'],
          [-1, 'inUse > :zero'],
        ] as const)
          await h.own.doc.send(
            new TransactWriteCommand({
              TransactItems: [
                {
                  Update: {
                    TableName,
                    Key: poolKey(pool),
                    UpdateExpression: 'ADD inUse :delta',
                    ConditionExpression: condition,
                    ...(delta === 1 ? { ExpressionAttributeNames: { '#limit': 'limit' } } : {}),
                    ExpressionAttributeValues: delta === 1 ? { ':delta': delta } : { ':delta': delta, ':zero': 0 },
                  },
                },
                {
                  Update: {
                    TableName,
                    Key: probeKey(worker),
                    UpdateExpression: 'SET n = :n',
                    ExpressionAttributeValues: { ':n': i },
                  },
                },
              ],
            }),
          );
        n += 2;
      }
      return n;
    };
    // Warm up first (JIT, connections).
    const warm = Date.now() + Math.min(1000, seconds * 500);
    await Promise.all(Array.from({ length: concurrency }, (_, worker) => loop(worker, warm)));
    const deadline = Date.now() + seconds * 1000;
    const t0 = Date.now();
    const counts = await Promise.all(Array.from({ length: concurrency }, (_, worker) => loop(worker, deadline)));
    return counts.reduce((a, b) => a + b, 0) / ((Date.now() - t0) / 1000);
  } finally {
    await h.own.doc.send(new DeleteCommand({ TableName, Key: poolKey(pool) })).catch(() => undefined);
    for (let worker = 0; worker < concurrency; worker++)
      await h.own.doc.send(new DeleteCommand({ TableName, Key: probeKey(worker) })).catch(() => undefined);
  }
}
