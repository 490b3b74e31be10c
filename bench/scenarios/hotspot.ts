import { type Harness } from '../harness';
import { timed, leadFor } from './schedule';

/**
 * A hotspot: `jobs` jobs due in the same second, once on a pool with a limit above them (every job takes a unit of
 * the pool's one counter item, as every limited pool's job does), once on an unlimited pool (no counter: each job's
 * take and release write its own record only), one after the other on the same local stack. The jobs are registered
 * (scheduled, their delayed copies sent) before they are due, so what is measured is the due second: how many started,
 * how late (the simulator's start call minus notBefore), and how many a second from the due time to the last start.
 */
export interface HotspotParams {
  jobs: number;
  limitedPool: string;
  unlimitedPool: string;
  leadMs: number;
  runMs: number;
  timeoutMs: number;
  /** run the unlimited pool's hotspot first (the machine's load drifts: run both orders to see it) */
  unlimitedFirst?: boolean;
}

export interface HotspotSide {
  pool: string;
  jobs: number;
  started: number;
  p50LatenessMs: number;
  p99LatenessMs: number;
  maxLatenessMs: number;
  /** started / (last start - due time) */
  jobsPerSecond: number;
  registeredInMs: number;
  /** DynamoDB TransactWriteItems items the side wrote (each slot change of a limited pool is one, with its counter) */
  transactItems: number;
  /** DynamoDB requests the side made, per job */
  dynamodbPerJob: number;
}

export interface HotspotResult {
  jobs: number;
  limited: HotspotSide;
  unlimited: HotspotSide;
  /** unlimited over limited: jobs a second (higher is better), p99 lateness (lower is better) */
  ratio: { jobsPerSecond: number; p99Lateness: number };
}

export async function runHotspot(h: Harness, p: HotspotParams): Promise<HotspotResult> {
  const side = async (group: string, pool: string): Promise<HotspotSide> => {
    const before = h.snapshot();
    const hot = await timed(h, {
      group,
      pool,
      jobs: p.jobs,
      dueAt: (t0) => Math.ceil((t0 + leadFor(p.jobs, p.leadMs)) / 1000) * 1000,
      runMs: p.runMs,
      timeoutMs: p.timeoutMs,
    });
    await h.waitEnded(group, p.jobs, pool, p.timeoutMs);
    const after = h.snapshot();
    const dynamodb = Object.entries(after.ops)
      .filter(([op]) => op.startsWith('dynamodb'))
      .reduce((sum, [op, n]) => sum + n - (before.ops[op] ?? 0), 0);
    // Every job is due in the same second: the rate is the jobs over the time from that second to the last start.
    const spanMs = Math.max(1000, hot.maxMs);
    const result: HotspotSide = {
      pool,
      jobs: p.jobs,
      started: hot.n,
      p50LatenessMs: hot.p50Ms,
      p99LatenessMs: hot.p99Ms,
      maxLatenessMs: hot.maxMs,
      jobsPerSecond: Math.round((hot.n / spanMs) * 1000),
      registeredInMs: hot.registeredInMs,
      transactItems: after.transactItems - before.transactItems,
      dynamodbPerJob: Math.round((dynamodb / p.jobs) * 10) / 10,
    };
    h.log(
      `  hotspot ${pool}: ${result.started}/${p.jobs} started; lateness p50 ${result.p50LatenessMs} ms, p99 ${result.p99LatenessMs} ms, ` +
        `max ${result.maxLatenessMs} ms; ${result.jobsPerSecond} jobs/s; ${result.transactItems} transaction items, ` +
        `${result.dynamodbPerJob} DynamoDB requests a job (registered in ${result.registeredInMs} ms)`,
    );
    return result;
  };
  const limitedSide = () => side('bench-hotl', p.limitedPool);
  const unlimitedSide = () => side('bench-hotu', p.unlimitedPool);
  const [limited, unlimited] = p.unlimitedFirst
    ? await unlimitedSide().then(async (u) => [await limitedSide(), u] as const)
    : await limitedSide().then(async (l) => [l, await unlimitedSide()] as const);
  const ratio = (a: number, b: number) => Math.round((a / Math.max(b, 1)) * 100) / 100;
  return {
    jobs: p.jobs,
    limited,
    unlimited,
    ratio: { jobsPerSecond: ratio(unlimited.jobsPerSecond, limited.jobsPerSecond), p99Lateness: ratio(unlimited.p99LatenessMs, limited.p99LatenessMs) },
  };
}
