import type { LocalStack } from '../../shared/local/stack';
import type { SimRun } from '../../shared/local/simulators/model';
import { unitsOverTime } from '../../shared/local/bench/scenarios/flowControl';
import { expectEveryJobRanOnce, jobRecord } from '../support/invariants';
import { waitFor } from '../support/waitFor';
import { enqueue } from '../support/testStack';
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

  // Act: the first tenant's jobs (each twice), and once Sluice has every one of them (started or waiting), the others
  const first = specs.slice(0, 12);
  const rest = specs.slice(12);
  await enqueue(stack, [...first, ...first.slice().reverse()]);
  await waitFor(
    "the first tenant's jobs all started or waiting",
    async () => {
      const records = await Promise.all(first.map((spec) => jobRecord(stack, spec.id)));
      return records.every((record) => record !== undefined && record.state !== 'queued');
    },
    30_000,
  );
  await enqueue(stack, [...rest, ...rest.slice().reverse()]);

  // Assess: every job once (lost events are the reconciler's), nothing dead-lettered, the pool idle at the end
  await expectEveryJobRanOnce(stack, { pool: POOL, limit: LIMIT, ids: specs.map((s) => s.id), timeoutMs: 90_000 });
  const runs = stack.simulator.runs().filter((run) => run.group === POOL);
  const weight = (run: SimRun) => byName.get(run.name)!.weight;
  expect(unitsOverTime(runs, weight, LIMIT).max).toBeLessThanOrEqual(LIMIT);
  for (const tenant of TENANTS) {
    const ofOrg = runs.filter((run) => byName.get(run.name)!.fairnessKey === tenant);
    expect(ofOrg).toHaveLength(12);
    expect(unitsOverTime(ofOrg, weight, ORG_LIMIT).max).toBeLessThanOrEqual(ORG_LIMIT);
  }
  // The workload did press on the limits: the first tenant's key was full, and the pool nearly so, at some moment.
  expect(
    unitsOverTime(
      runs.filter((run) => byName.get(run.name)!.fairnessKey === TENANTS[0]),
      weight,
      ORG_LIMIT,
    ).max,
  ).toBe(ORG_LIMIT);
  expect(unitsOverTime(runs, weight, LIMIT).max).toBeGreaterThanOrEqual(LIMIT - 1);
}, 120_000);
