import { SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { toJobItem } from '../../shared/adapters/dynamodb/jobItem';
import { encodeJobBody } from '../../shared/domain/jobBody';
import { JobState } from '../../shared/domain/jobState';
import { registeredRecord } from '../../shared/ports/jobLedger';
import { type Harness, waitUntil } from '../harness';
import { distribution } from '../metrics';
import { makeJobs } from '../workload';

/**
 * A hotspot: `jobs` jobs due in the same second, once on a pool with a limit above them (every job takes a unit of the
 * pool's one counter item, as every limited pool's job does), once on an unlimited pool (no counter: each job's take
 * and release write its own record only), one after the other on the same local stack.
 *
 * What is measured is the due second, not registration: the jobs are put in the state the acquirer's `schedule` row
 * leaves a job due within 15 minutes (its record `scheduled`, its copy sent with the whole seconds left as
 * DelaySeconds), by the bench's own clients, before they are due. Then: how many started, how late (the simulator's
 * start call minus notBefore), and how many a second from the due time to the last start.
 */
export interface HotspotParams {
  jobs: number;
  limitedPool: string;
  unlimitedPool: string;
  /** ms from the start of the preparation to the due second (at least 3 ms a job) */
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
  /** started / (last start - due time), at least one second */
  jobsPerSecond: number;
  /** how long writing the records and sending the copies took; it must end before the due second */
  preparedInMs: number;
  leadMs: number;
  /** TransactWriteItems items Sluice wrote (each slot change of a limited pool is one, with its counter) */
  transactItems: number;
  /** DynamoDB requests Sluice made, per job, from the due second to the last run's end */
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
  const side = async (group: string, pool: string, count = p.jobs): Promise<HotspotSide> => {
    const t0 = Date.now();
    const leadMs = Math.max(p.leadMs, count * 3);
    const dueAt = Math.ceil((t0 + leadMs) / 1000) * 1000;
    const jobs = makeJobs({ group, pool, durations: Array(count).fill(p.runMs), tag: 'h' }).map((job) => ({
      ...job,
      spec: { ...job.spec, notBefore: new Date(dueAt).toISOString() },
    }));
    h.register(jobs);
    await prepare(
      h,
      jobs.map((job) => job.spec),
      dueAt,
    );
    const preparedInMs = Date.now() - t0;
    if (Date.now() >= dueAt) h.log(`  hotspot ${pool}: prepared ${Date.now() - dueAt} ms after the due second: raise leadMs`);
    const before = h.snapshot();
    // The reconciler on the stage's compressed schedule, as on AWS: a take that lost every race for the counter parks
    // the job, and the reconciler's fill lets in any such job no release found.
    const stopReconciler = h.reconcileEvery(h.reconcilePeriodMs);
    await waitUntil(`${group}: every job started`, () => h.runsOf(group).length >= count, p.timeoutMs + leadMs, 100).finally(stopReconciler);
    const lateness = h.runsOf(group).map((run) => run.startCallAt - dueAt);
    await h.waitEnded(group, count, pool, p.timeoutMs);
    const after = h.snapshot();
    const hot = distribution(lateness);
    const dynamodb = Object.entries(after.ops)
      .filter(([op]) => op.startsWith('dynamodb'))
      .reduce((sum, [op, n]) => sum + n - (before.ops[op] ?? 0), 0);
    const result: HotspotSide = {
      pool,
      jobs: count,
      started: hot.n,
      p50LatenessMs: hot.p50Ms,
      p99LatenessMs: hot.p99Ms,
      maxLatenessMs: hot.maxMs,
      jobsPerSecond: Math.round((hot.n / Math.max(1000, hot.maxMs)) * 1000),
      preparedInMs,
      leadMs,
      transactItems: after.transactItems - before.transactItems,
      dynamodbPerJob: Math.round((dynamodb / count) * 10) / 10,
    };
    h.log(
      `  hotspot ${pool}: ${result.started}/${count} started; lateness p50 ${result.p50LatenessMs} ms, p99 ${result.p99LatenessMs} ms, ` +
        `max ${result.maxLatenessMs} ms; ${result.jobsPerSecond} jobs/s; ${result.transactItems} transaction items, ` +
        `${result.dynamodbPerJob} DynamoDB requests a job (prepared in ${preparedInMs} ms of ${leadMs})`,
    );
    return result;
  };
  // A warm-up hotspot on each pool first, not measured: the stack's first second (code compiled, connections opened,
  // the pool's counter read into the adapters' beliefs) would otherwise fall on whichever side runs first.
  const warm = Math.min(200, Math.ceil(p.jobs / 5));
  await side('bench-hotw', p.limitedPool, warm);
  await side('bench-hotx', p.unlimitedPool, warm);
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

/**
 * The jobs as the `schedule` row leaves a job due within 15 minutes: the record `scheduled` (version 1, no due index
 * keys) and its copy on the queue with DelaySeconds = the whole seconds left. Eight lanes of 25-item batch writes, then
 * eight lanes of 10-message batch sends.
 */
async function prepare(h: Harness, specs: ReadonlyArray<Parameters<typeof encodeJobBody>[0] & { id: string; pool: string }>, dueAt: number) {
  const now = Date.now();
  const lanes = async <T>(chunks: T[][], send: (chunk: T[]) => Promise<void>) => {
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < chunks.length) await send(chunks[next++]!);
      }),
    );
  };
  const chunk = <T>(items: readonly T[], size: number): T[][] =>
    Array.from({ length: Math.ceil(items.length / size) }, (_, i) => items.slice(i * size, (i + 1) * size));
  await lanes(chunk(specs, 25), async (batch) => {
    let requests = batch.map((spec) => ({
      PutRequest: { Item: toJobItem({ ...registeredRecord(spec as never, now), state: JobState.Scheduled }) },
    }));
    while (requests.length > 0) {
      const out = await h.own.doc.send(new BatchWriteCommand({ RequestItems: { [h.stack.tableName]: requests } }));
      requests = (out.UnprocessedItems?.[h.stack.tableName] ?? []) as typeof requests;
    }
  });
  await lanes(chunk(specs, 10), async (batch) => {
    let entries = batch.map((spec, i) => ({
      Id: String(i),
      MessageBody: encodeJobBody(spec),
      DelaySeconds: Math.min(900, Math.max(0, Math.floor((dueAt - Date.now()) / 1000))),
    }));
    for (let attempt = 0; entries.length > 0; attempt++) {
      if (attempt === 5) throw new Error('SendMessageBatch kept failing');
      const out = await h.own.sqs.send(new SendMessageBatchCommand({ QueueUrl: h.stack.queueUrl, Entries: entries }));
      const failed = new Set((out.Failed ?? []).map((f) => f.Id));
      entries = entries.filter((entry) => failed.has(entry.Id));
    }
  });
}
