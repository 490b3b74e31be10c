import type { LocalStack } from '../../local/stack';
import { Drift } from '../../shared/app/reconcile';
import { conformanceOf } from '../../shared/kinds/kindConformance';
import { KINDS, type JobSpec } from '../../shared/kinds/registry';
import { CALLBACK_REPORT } from '../../shared/kinds/callback/reports';
import { expectEndedByFirstPassAfterRun, expectEveryJobRanOnce, runsOf } from '../support/invariants';
import { holdBusEvents, pauseReconciler, reconcilePass, watchStatesBeforePasses } from '../support/probes';
import { enqueue, jobState, poolItem } from '../support/testStack';
import { waitFor } from '../support/waitFor';
import { jobsFor, startFaultStack } from './workload';

/** The job services' event sources: the bus's faults aim at their events, not at Sluice's own (a job ended). */
const SERVICE_SOURCES = [...new Set(KINDS.flatMap((kind) => kind.events.rules.flatMap((rule) => [...rule.source])))];

/**
 * Completion events are best effort (AWS may lose one) and at least once (AWS may send one twice). Lost: the
 * reconciler finds the ended run through the job API and frees its slot in its next pass (within one period on AWS;
 * checked here as passes, not as time). Duplicated: only the first
 * completion of a run frees a slot, so a second never frees another job's slot (which would run one job too many).
 */
const POOLS = { lostsim: 2, lostbus: 2, dupsim: 2, dupbus: 2, latecb: 2 };

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
  const specs = jobsFor('lostsim', 2 * KINDS.length, (i) => 150 + i * 30);
  watchStatesBeforePasses(
    stack,
    specs.map((s) => s.id),
  );
  const ids = await enqueue(stack, specs);

  // Every job ends only as the reconciler finds its run ended (or, with no status API, at its deadline), two at a time:
  // a deadline for the whole that a loaded machine does not reach. What bounds each job is checked per pass, below.
  await expectEveryJobRanOnce(stack, { pool: 'lostsim', limit: POOLS.lostsim, ids, timeoutMs: 150_000 });

  expect(stack.simulator.droppedEvents()).toHaveLength(2 * KINDS.length);
  // Each was ended by the first full reconciler pass that found it running after its run ended.
  await expectEndedByFirstPassAfterRun(stack, ids);
}, 180_000);

test("lost completion events (the bus drops them), the last run's among them: the reconciler's next pass frees its slot", async () => {
  const specs = jobsFor('lostbus', 6, () => 300);
  const ids = await enqueue(stack, specs);
  // Once the last job has started, every end event still to come is lost: the last run's included. The scheduled
  // reconciler is paused then, so that the pass that repairs them is the test's own, made once every run has ended.
  await waitFor('the last job to start', () => runsOf(stack, ids).size === ids.length, 60_000, 5);
  stack.bus.setFaults({ dropNext: POOLS.lostbus, sources: SERVICE_SOURCES });
  const resume = pauseReconciler();
  try {
    const runs = () => [...runsOf(stack, ids).values()].map(([run]) => run!);
    await waitFor(
      'every run to end and the bus to settle',
      () => runs().every((r) => r.endedAt !== undefined) && stack.bus.stats().pending === 0,
      60_000,
    );
    const last = runs().sort((a, b) => b.endSeq! - a.endSeq!)[0]!;
    const event = stack.simulator.emitted().find((e) => e.executionId === last.executionId)!;
    expect(stack.bus.deliveries().filter((d) => d.eventId === event.event.id)).toEqual([]);

    // The jobs whose end events were lost (the last one among them) still hold their slots: nothing else frees them.
    const states = await Promise.all(ids.map(async (id) => [id, await jobState(stack, id)] as const));
    const unended = states.filter(([, state]) => state === 'running').map(([id]) => id);
    const lastId = ids.find((id) => runsOf(stack, [id]).get(id)![0]!.executionId === last.executionId)!;
    expect(unended).toContain(lastId);
    expect(unended.length).toBeLessThanOrEqual(POOLS.lostbus);
    expect((await poolItem(stack, 'lostbus'))?.inUse).toBe(unended.length);

    // One reconciler pass ends every one of them whose kind has a status API, and frees its slot.
    const report = await reconcilePass(stack);
    const asked = unended.filter((id) => conformanceOf(runsOf(stack, [id]).get(id)![0]!.kind).statusApi !== false);
    expect(report.drift[Drift.LostEvent] ?? 0).toBe(asked.length);
    for (const id of asked) expect(await jobState(stack, id)).toBe('succeeded');
  } finally {
    resume();
  }
  // A callback job among them (no status API) ends at its deadline, by the scheduled reconciler.
  await expectEveryJobRanOnce(stack, { pool: 'lostbus', limit: POOLS.lostbus, ids });
}, 120_000);

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
  stack.bus.setFaults({ duplicateNext: 1_000, sources: SERVICE_SOURCES });
  const ids = await enqueue(
    stack,
    jobsFor('dupbus', 12, (i) => 100 + (i % 4) * 60),
  );

  await expectEveryJobRanOnce(stack, { pool: 'dupbus', limit: POOLS.dupbus, ids });

  expect(stack.bus.stats().duplicated - duplicated).toBeGreaterThanOrEqual(12);
}, 60_000);

test("late reports (a callback job's report comes after its heartbeat deadline ended it): the job stays failed, the report frees nothing", async () => {
  // Callback jobs of 300 ms with a heartbeat of 1 s: their reports are held on the bus, as EventBridge retrying a
  // failed delivery would hold them, until the deadline has ended every job.
  const specs = [0, 1, 2].map((i) => ({
    ...(conformanceOf('callback').spec(`latecb-${i}`, `latecb--${i}--300ms`) as JobSpec),
    heartbeatSeconds: 1,
    pool: 'latecb',
  }));
  const ids = specs.map((s) => s.id);
  const hold = holdBusEvents(stack, (e) => e.source === CALLBACK_REPORT.source && e['detail-type'] === CALLBACK_REPORT.completed);
  try {
    await enqueue(stack, specs);
    await waitFor(
      'every job ended by its deadline',
      async () => (await Promise.all(ids.map((id) => jobState(stack, id)))).every((s) => s === 'failed'),
      90_000,
      50,
    );
    expect(hold.held()).toHaveLength(ids.length);
  } finally {
    hold.release();
  }
  // The reports are delivered now, after the deadlines: the jobs stay failed, and no slot is given back twice.
  await stack.bus.drain();
  expect(await Promise.all(ids.map((id) => jobState(stack, id)))).toEqual(ids.map(() => 'failed'));
  await expectEveryJobRanOnce(stack, { pool: 'latecb', limit: POOLS.latecb, ids });
  const runs = new Set([...runsOf(stack, ids).values()].map(([run]) => run!.executionId));
  const reports = new Set(
    stack.simulator
      .emitted()
      .filter((e) => runs.has(e.executionId))
      .map((e) => e.event.id),
  );
  expect(stack.bus.deliveries().filter((d) => reports.has(d.eventId) && d.ok)).toHaveLength(ids.length);
}, 120_000);
