import type { LocalStack } from '../../local/stack';
import { expectEveryJobRanOnce } from '../support/invariants';
import { countConditionalFailures } from '../support/probes';
import { enqueue } from '../support/testStack';
import { jobsFor, startFaultStack } from './workload';

/**
 * Many acquirers at once on one small pool: most conditional writes lose (ConditionalCheckFailedException), and every
 * loser must end up parked, never running over the limit, never lost, never holding a slot.
 */
const POOLS = { stormA: 3, stormB: 2 };

let stack: LocalStack;
beforeAll(async () => {
  // Ten pollers of ten messages: up to a hundred acquires in flight on the same pool items.
  stack = await startFaultStack(POOLS, { pollerConcurrency: 10 });
}, 60_000);
afterAll(() => stack?.stop());

test('a conditional-write storm: 160 jobs (each sent twice) at once on pools of 3 and 2', async () => {
  const failures = countConditionalFailures(stack);
  try {
    const a = jobsFor('stormA', 100, (i) => 30 + ((i * 37) % 120));
    const b = jobsFor('stormB', 60, (i) => 30 + ((i * 53) % 120));
    const mixed = a.flatMap((spec, i) => (b[i] ? [spec, b[i]!] : [spec]));
    await enqueue(stack, [...mixed, ...mixed.slice().reverse()]);

    await expectEveryJobRanOnce(stack, { pool: 'stormA', limit: POOLS.stormA, ids: a.map((s) => s.id), timeoutMs: 90_000 });
    await expectEveryJobRanOnce(stack, { pool: 'stormB', limit: POOLS.stormB, ids: b.map((s) => s.id), timeoutMs: 90_000 });

    // The storm did happen: hundreds of writes lost their race.
    expect(failures.count()).toBeGreaterThan(100);
  } finally {
    failures.stop();
  }
}, 120_000);
