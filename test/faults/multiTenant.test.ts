import type { LocalStack } from '../../local/stack';
import type { SimRun } from '../../local/simulators/model';
import { unitsOverTime } from '../../bench/scenarios/flowControl';
import { expectEveryJobRanOnce, jobRecord } from '../support/invariants';
import { holdCompletions, pauseReconciler } from '../support/probes';
import { waitFor } from '../support/waitFor';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { enqueue, poolItem } from '../support/testStack';
import { jobsFor, simNameOf, type Spec, startFaultStack } from './workload';

/**
 * A multi-tenant workload under faults (issue 14), on the whole local stack: three tenants share a pool of 5 units,
 * each tenant's jobs also count against its org's key (2 units each), weights of 1 and 2, a priority on some, fairness
 * keys on all; every job is sent twice, starts are throttled and completion events dropped and duplicated. From the
 * simulator's own record of runs: every job ran exactly once, and at no moment did the units in progress pass the
 * pool's 5 or any org's 2. The first tenant's jobs all arrive before the others': without its key it would take the
 * whole pool, so both limits bind (a broken key guard fails this every time, not by chance).
 */
const POOL = 'tenants';
const LIMIT = 5;
const ORG_LIMIT = 2;
const TENANTS = ['acme', 'globex', 'initech'];

let stack: LocalStack;
beforeAll(async () => {
  stack = await startFaultStack({ [POOL]: LIMIT }, { env: { KEY_LIMITS: JSON.stringify({ org: ORG_LIMIT }), RETRY_MAX_SECONDS: '1' } });
}, 60_000);
afterAll(() => stack?.stop());
afterEach(() => stack.simulator.clearFaults());

type TenantSpec = Spec & { limits: string[]; weight: number; priority?: number; fairnessKey: string };

test('three tenants, org keys, weights and priorities, duplicates, throttled starts, lost and doubled events: no limit passed, every job once', async () => {
  // Prepare: 36 jobs, 12 per tenant; the first tenant sends all of its jobs first
  const specs: TenantSpec[] = jobsFor(POOL, 36, (i) => 300 + ((i * 41) % 200)).map((spec, i) => {
    const tenant = TENANTS[Math.floor(i / 12)]!;
    return {
      ...spec,
      limits: [`org:${tenant}`],
      weight: 1 + (i % 2),
      ...(i % 5 === 0 && { priority: 1 }),
      fairnessKey: tenant,
    };
  });
  const byName = new Map(specs.map((spec) => [simNameOf(spec), spec]));
  stack.simulator.setFaults({ throttleStarts: 6, dropEvents: 3, duplicateEvents: 3 });

  // Act: the first tenant's jobs (each twice), and once Sluice has every one of them (started or waiting), the others.
  // Until the limits are seen pressed on (the first tenant's key full, the pool at 4 units or more) the runs'
  // completions are held back at the releaser and the reconciler paused: runs of 300-500 ms need not overlap on a
  // busy machine, and the slots stay taken for as long as the test says.
  const first = specs.slice(0, 12);
  const rest = specs.slice(12);
  const resume = pauseReconciler();
  const hold = holdCompletions((c) => c.name.startsWith(`${POOL}--`));
  try {
    await enqueue(stack, [...first, ...first.slice().reverse()]);
    await waitFor(
      "the first tenant's jobs all started or waiting",
      async () => {
        const records = await Promise.all(first.map((spec) => jobRecord(stack, spec.id)));
        const behind = first.flatMap((spec, i) =>
          records[i] === undefined || records[i]!.state === 'queued' ? [[spec.id, records[i] ?? null]] : [],
        );
        // named on a timeout (waitFor reports the last error): which jobs, and their records (or none)
        if (behind.length > 0)
          throw new Error(
            `not yet: ${JSON.stringify(behind)}; job queue poller ${JSON.stringify(stack.poller.stats)}; queues ${JSON.stringify(await queueDepths(stack))}`,
          );
        return true;
      },
      60_000,
    );
    await enqueue(stack, [...rest, ...rest.slice().reverse()]);
    // The workload presses on the limits: the first tenant's key full, and the pool nearly so, as Sluice counts units.
    await waitFor(
      "the first tenant's key full and the pool at 4 units or more, or the pool full",
      async () => {
        const key = await poolItem(stack, `key/org:${TENANTS[0]}`);
        const pool = await poolItem(stack, POOL);
        // Or the pool full with the key not: a throttled start of the first tenant gives its slot back (backoff), and
        // the other tenants' jobs may fill the pool before its retry comes; with completions held, its key could then
        // never fill (seen in a fresh-clone CI run: key 1 of 2, pool 5 of 5, the test waiting for ever).
        if ((key?.inUse === ORG_LIMIT && (pool?.inUse ?? 0) >= LIMIT - 1) || (pool !== undefined && pool.inUse >= pool.limit)) return true;
        // named on a timeout: the counters, and where every job of the workload stands
        const records = await Promise.all(specs.map((spec) => jobRecord(stack, spec.id)));
        const states = specs.map((spec, i) => `${spec.id}:${records[i]?.state ?? 'none'}`).join(' ');
        throw new Error(
          `not yet: key ${JSON.stringify(key)}, pool ${JSON.stringify(pool)}; jobs ${states}; queues ${JSON.stringify(await queueDepths(stack))}`,
        );
      },
      60_000,
    );
  } finally {
    hold.release();
    resume();
  }

  // Assess: every job once (lost events are the reconciler's), nothing dead-lettered, the pool idle at the end
  await expectEveryJobRanOnce(stack, { pool: POOL, limit: LIMIT, ids: specs.map((s) => s.id), timeoutMs: 150_000 });
  const runs = stack.simulator.runs().filter((run) => run.group === POOL);
  const weight = (run: SimRun) => byName.get(run.name)!.weight;
  expect(unitsOverTime(runs, weight, LIMIT).max).toBeLessThanOrEqual(LIMIT);
  for (const tenant of TENANTS) {
    const ofOrg = runs.filter((run) => byName.get(run.name)!.fairnessKey === tenant);
    expect(ofOrg).toHaveLength(12);
    expect(unitsOverTime(ofOrg, weight, ORG_LIMIT).max).toBeLessThanOrEqual(ORG_LIMIT);
  }
}, 240_000);

async function queueDepths(stack: LocalStack): Promise<Record<string, unknown>> {
  const depth = async (url: string) =>
    (
      await stack.sqs.send(
        new GetQueueAttributesCommand({
          QueueUrl: url,
          AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'],
        }),
      )
    ).Attributes;
  return { jobs: await depth(stack.queueUrl), dlq: await depth(stack.deadLetterUrl) };
}
