import type { LocalStack } from '../../local/stack';
import { SLUICE_EVENT_SOURCE, SluiceDetailType } from '../../shared/ports/eventPublisher';
import { expectEveryJobRanOnce } from '../support/invariants';
import { startPoolStack } from '../support/poolStack';
import { enqueue } from '../support/testStack';
import { waitFor } from '../support/waitFor';

/**
 * Each job's end arrives on the bus as `Sluice Job Ended` (source `sluice`), where a user's rule picks it up: one per
 * job, with how it ended and why. Run on the whole local stack, the rule on its bus as a user would write it.
 */
const POOL = 'announced';
type Ended = { source: string; 'detail-type': string; detail: Record<string, unknown> };
let stack: LocalStack;
const seen: Ended[] = [];
beforeAll(async () => {
  stack = await startPoolStack(
    { [POOL]: 2 },
    { defaultRunMs: 100, simulator: { outcome: (_kind, name) => (name.includes('bad') ? 'failed' : 'succeeded') } },
  );
  stack.bus.addRule({
    name: 'my-job-ends',
    pattern: { source: [SLUICE_EVENT_SOURCE], 'detail-type': [SluiceDetailType.JobEnded], detail: { pool: [POOL, 'no-such-pool'] } },
    target: async (event) => void seen.push(event as Ended),
  });
}, 60_000);
afterAll(() => stack?.stop());

test('a succeeded, a failed and a dead-lettered job: one event each, saying how and why', async () => {
  const ids = ['ok-1', 'bad-1'];
  await enqueue(stack, [
    { kind: 'appflow', pool: POOL, id: 'ok-1', flowName: `${POOL}--good` },
    { kind: 'glue', pool: POOL, id: 'bad-1', jobName: `${POOL}--bad` },
    { kind: 'appflow', pool: 'no-such-pool', id: 'lost-1', flowName: 'x' },
  ]);
  await expectEveryJobRanOnce(stack, { pool: POOL, limit: 2, ids, failed: ['bad-1'], timeoutMs: 90_000 });
  const byId = await waitFor(
    'an end event for each job',
    () => {
      const ends = new Map(seen.map((e) => [e.detail.jobId as string, e]));
      return ['ok-1', 'bad-1', 'lost-1'].every((id) => ends.has(id)) ? ends : undefined;
    },
    60_000,
  );
  expect(byId.get('ok-1')!.detail).toMatchObject({ pool: POOL, kind: 'appflow', target: `${POOL}--good`, outcome: 'succeeded' });
  expect(byId.get('ok-1')!.detail.runId).toEqual(expect.any(String));
  expect(byId.get('bad-1')!.detail).toMatchObject({ kind: 'glue', target: `${POOL}--bad`, outcome: 'failed', reason: expect.any(String) });
  expect(byId.get('lost-1')!.detail).toMatchObject({
    pool: 'no-such-pool',
    outcome: 'dead-lettered',
    reason: expect.stringMatching(/unknown pool/),
  });
  // One per job, even with the simulator's events and the reconciler at work.
  expect(seen.filter((e) => e.detail.jobId === 'ok-1')).toHaveLength(1);
  expect(seen.every((e) => e.source === SLUICE_EVENT_SOURCE)).toBe(true);
}, 180_000);
