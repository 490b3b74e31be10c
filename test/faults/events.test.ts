import type { LocalStack } from '../../shared/local/stack';
import { expectEveryJobRanOnce, runsOf } from '../support/invariants';
import { waitFor } from '../support/waitFor';
import { enqueue } from '../support/testStack';
import { KINDS } from '../../shared/kinds/registry';
import { jobsFor, startFaultStack } from './workload';

/**
 * Completion events are best effort (AWS may lose one) and at least once (AWS may send one twice). Lost: the
 * reconciler finds the ended run through the job API and frees its slot within one period. Duplicated: only the first
 * completion of a run frees a slot, so a second never frees another job's slot (which would run one job too many).
 */
const POOLS = { lostsim: 2, lostbus: 2, dupsim: 2, dupbus: 2 };

let stack: LocalStack;
beforeAll(async () => {
  stack = await startFaultStack(POOLS);
}, 60_000);
afterAll(() => stack?.stop());
afterEach(() => {
  stack.simulator.clearFaults();
  stack.bus.setFaults({});
});

test('lost completion events (the service never sends them): every job still ends once and no slot leaks', async () => {
  stack.simulator.setFaults({ dropEvents: 2 }); // the next 2 end events of each kind (2 jobs of each kind, by turns)
  const ids = await enqueue(
    stack,
    jobsFor('lostsim', 2 * KINDS.length, (i) => 150 + i * 30),
  );

  await expectEveryJobRanOnce(stack, { pool: 'lostsim', limit: POOLS.lostsim, ids });

  expect(stack.simulator.droppedEvents()).toHaveLength(2 * KINDS.length);
}, 60_000);

test("lost completion events (the bus drops them), the last run's among them: its slot is free one reconcile period later", async () => {
  const ids = await enqueue(
    stack,
    jobsFor('lostbus', 6, () => 300),
  );
  // Once the last job has started, every end event still to come is lost: the last run's included.
  await waitFor('the last job to start', () => runsOf(stack, ids).size === ids.length, 20_000, 5);
  stack.bus.setFaults({ dropNext: POOLS.lostbus });

  await expectEveryJobRanOnce(stack, { pool: 'lostbus', limit: POOLS.lostbus, ids });

  const last = [...runsOf(stack, ids).values()].map(([run]) => run!).sort((a, b) => b.endSeq! - a.endSeq!)[0]!;
  const event = stack.simulator.emitted().find((e) => e.executionId === last.executionId)!;
  expect(stack.bus.deliveries().filter((d) => d.eventId === event.event.id)).toEqual([]);
}, 60_000);

test('duplicated completion events (the service sends each twice): no second release, never more runs than the limit', async () => {
  stack.simulator.setFaults({ duplicateEvents: 6 });
  const ids = await enqueue(
    stack,
    jobsFor('dupsim', 12, (i) => 100 + (i % 4) * 60),
  );

  await expectEveryJobRanOnce(stack, { pool: 'dupsim', limit: POOLS.dupsim, ids });

  expect(stack.simulator.emitted().filter((e) => e.duplicate)).toHaveLength(12);
}, 60_000);

test('duplicated completion events (the bus delivers each twice at once): no second release, never more runs than the limit', async () => {
  const duplicated = stack.bus.stats().duplicated;
  stack.bus.setFaults({ duplicateNext: 1_000 });
  const ids = await enqueue(
    stack,
    jobsFor('dupbus', 12, (i) => 100 + (i % 4) * 60),
  );

  await expectEveryJobRanOnce(stack, { pool: 'dupbus', limit: POOLS.dupbus, ids });

  expect(stack.bus.stats().duplicated - duplicated).toBeGreaterThanOrEqual(12);
}, 60_000);
