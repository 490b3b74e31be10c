import { driftSince, type Harness, perJob, type RequestsPerJob, sleep, waitUntil } from '../harness';
import { makeJobs } from '../workload';

export interface ReconcilerParams {
  pool: string;
  limit: number;
  runMs: number;
  timeoutMs: number;
}

type Cost = Omit<RequestsPerJob, 'ops' | 'total'> & { total: number; ops: Record<string, number> };

export interface ReconcilerResult {
  /** Pools in the registry when measured (the reconciler visits each). */
  pools: number;
  /** One reconciler run with `limit` running jobs holding slots, and one with none: requests per run. */
  withHolders: Cost;
  withoutHolders: Cost;
  /** The difference over the holders: what checking one running job costs per run. */
  perHolder: Cost;
  /** What the two runs put right (their writes: the tracer's transaction counts are not by caller), by drift. */
  putRight?: Record<string, number>;
}

/**
 * What the safety net costs: it is not per backlog but per running job and period. One run while `limit` jobs hold
 * slots, one after they are done; the difference is the price of checking one running job once (a ledger read and a
 * status call to the job API).
 */
export async function runReconcilerCost(h: Harness, p: ReconcilerParams): Promise<ReconcilerResult> {
  // A run first, unmeasured and before the jobs: the loader's first run ever reads the due index from no cursor (once
  // per deployment), which is not the cost of a run.
  await h.reconcileNow();
  const jobs = makeJobs({ group: p.pool, pool: p.pool, durations: Array.from({ length: p.limit }, () => p.runMs), tag: 'r' });
  await h.enqueue(jobs);
  await waitUntil(`${p.limit} runs started`, () => h.runsOf(p.pool).length >= p.limit, p.timeoutMs, 50);
  await sleep(300); // the acquirers record the runs
  // Only the reconciler's own calls: a run that ends (its release) or an idle poll during a run is not its cost. Each
  // measured run right after an unmeasured one: the scheduled-job loader's cursor moves once a minute (a run after it
  // moved reads the new minute's due buckets and writes the cursor), so both measured runs find it where the run
  // before left it, and their difference is the holders'.
  const before = new Map(h.reconcilerDrift);
  await h.reconcileNow();
  const a = h.snapshot('reconciler');
  await h.reconcileNow();
  const b = h.snapshot('reconciler');
  // The difference is the holders' only if every run held its slot from before the measured run to after it.
  const held = h.runsOf(p.pool).filter((run) => run.startedAt <= a.at && (run.endedAt === undefined || run.endedAt >= b.at)).length;
  if (held < p.limit)
    throw new Error(`only ${held} of ${p.limit} runs were in progress all through the measured reconciler run: make reconciler.runMs longer`);
  await h.waitEnded(p.pool, p.limit, p.pool, p.timeoutMs);
  await h.settle(p.pool);
  await h.reconcileNow();
  const c = h.snapshot('reconciler');
  await h.reconcileNow();
  const d = h.snapshot('reconciler');
  const putRight = driftSince(h, before);
  const pools = (await h.leases.listPools()).length;
  const withHolders = perJob(a, b, 1);
  const withoutHolders = perJob(c, d, 1);
  const diff = (key: keyof Omit<Cost, 'ops'>) => Math.round(((withHolders[key] - withoutHolders[key]) / p.limit) * 1000) / 1000;
  const ops: Record<string, number> = {};
  for (const [k, n] of Object.entries(withHolders.ops)) {
    const delta = (n - (withoutHolders.ops[k] ?? 0)) / p.limit;
    if (delta > 0) ops[k] = Math.round(delta * 1000) / 1000;
  }
  const perHolder: Cost = {
    sqs: diff('sqs'),
    dynamodb: diff('dynamodb'),
    dynamodbReads: diff('dynamodbReads'),
    dynamodbWrites: diff('dynamodbWrites'),
    dynamodbWriteUnits: diff('dynamodbWriteUnits'),
    jobApi: diff('jobApi'),
    lambda: 0,
    events: diff('events'),
    total: diff('total'),
    ops,
    emptyReceives: 0,
  };
  h.log(
    `reconciler: ${withHolders.total} requests per run with ${p.limit} running jobs, ${withoutHolders.total} with none (${pools} pools); ${perHolder.total} per running job`,
  );
  return { pools, withHolders, withoutHolders, perHolder, putRight };
}
