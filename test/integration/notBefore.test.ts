import type { LocalStack } from '../../local/stack';
import { expectEveryJobRanOnce, runsOf } from '../support/invariants';
import { startPoolStack } from '../support/poolStack';
import { enqueue, jobState } from '../support/testStack';
import { waitFor } from '../support/waitFor';
import { CancelJob } from '../../shared/app/cancelJob';
import { container } from '../../shared/runtime/container';

/**
 * Jobs that start at a time, through the whole local stack: the acquirer registers them scheduled and sends their copy
 * with DelaySeconds (whole seconds), then waits the sub-second rest; a cancelled one never starts. Lateness targets are
 * the bench's (schedule scenario); here: never before notBefore, every job once.
 */
const POOLS = { later: 4 };

let stack: LocalStack;
beforeAll(async () => {
  stack = await startPoolStack(POOLS, { defaultRunMs: 150 });
}, 60_000);
afterAll(() => stack?.stop());

test('jobs with a notBefore seconds ahead start at it, not before, once each; a cancelled one never starts', async () => {
  // Far enough ahead for the jobs to be registered first on a busy machine (the check below), with a sub-second rest.
  const dueAt = Math.ceil((Date.now() + 8_000) / 1000) * 1000 + 370;
  const specs = Array.from({ length: 6 }, (_, i) => ({
    kind: 'appflow',
    pool: 'later',
    id: `later-${i}`,
    flowName: `later--${i}--150ms`,
    notBefore: new Date(dueAt).toISOString(),
  }));
  const ids = await enqueue(stack, specs);
  // Registered scheduled before its time (no slot, no run).
  await waitFor(
    'every job registered',
    async () => (await Promise.all(ids.map((id) => jobState(stack, id)))).every((s) => s === 'scheduled'),
    dueAt - Date.now(),
    20,
  );
  expect(Date.now()).toBeLessThan(dueAt);
  expect(runsOf(stack, ids).size).toBe(0);
  const { deps } = container();
  expect((await new CancelJob({ ...deps, schedule: deps.schedule! }).cancel('later-5')).outcome).toBe('cancelled');

  const started = ids.slice(0, 5);
  await expectEveryJobRanOnce(stack, { pool: 'later', limit: POOLS.later, ids: started });
  for (const [, [run]] of runsOf(stack, started)) expect(run!.startCallAt).toBeGreaterThanOrEqual(dueAt);
  expect(await jobState(stack, 'later-5')).toBe('cancelled');
  expect(runsOf(stack, ['later-5']).size).toBe(0);
}, 120_000);
