import { Loader } from '../../shared/app/loadScheduled';
import { JobState } from '../../shared/domain/jobState';
import { dueBucket, dueSortKey } from '../../shared/domain/notBefore';
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { loaderCursorKey } from '../../shared/adapters/dynamodb/keys';
import { DynamoScheduleStore } from '../../shared/adapters/dynamodb/scheduleStore';
import { registeredRecord } from '../../shared/ports/jobLedger';
import { container } from '../../shared/runtime/container';
import { CrashSwitch, crashable, SimulatedCrash } from '../support/fakes';
import { expectEveryJobRanOnce, runsOf } from '../support/invariants';
import { testClients } from '../support/testStack';
import { waitFor } from '../support/waitFor';
import { useCrashStack } from './setup/crashStack';
import { jobsFor } from './workload';
import type { JobSpec } from '../../shared/kinds/registry';

/**
 * The loader crashing mid-batch (issue 11's fault matrix), on the local stack with the real functions, emulators and
 * simulator. Jobs scheduled on the due index as the acquirer's `schedule` step writes them (a job registered more than
 * 15 minutes before it is due), now due in a few seconds. A loader process dies after a few of its sends (the message
 * sent, its `load` write never made); then the reconciler's run (the loader first) and a second loader at the same
 * time load the rest. Every job runs once, from the simulator's own record of runs; none is lost.
 */
const POOLS = { sched: 4 };
const fixture = useCrashStack(POOLS);
let restoreLoader: (() => void) | undefined;
afterEach(() => restoreLoader?.());

// Dying right after its 5th send (that job sent but still scheduled), or right after its 5th `load` (that job sent and
// queued): the second is where a loader that wrote before it sent would lose the job (queued, with no message).
test.each(['queue.send', 'schedule.load'])(
  'a loader dying after its 5th %s, then two at once: no job lost, none run twice',
  async (at) => {
    const { stack } = fixture;
    const { doc } = testClients(stack);
    // The stack's own periodic reconciler runs its loader too: held off before the jobs are scheduled, until the dying
    // one has run, so the crash lands mid-batch as armed. Held off once a scheduled run met the hold: the schedule runs
    // one invocation at a time, so no loader run that began before it is still reading the due index.
    const { loader } = container();
    const run = loader.run;
    restoreLoader = () => (loader.run = run);
    let heldOff = 0;
    loader.run = async () => {
      heldOff++;
      return { loaded: 0, skipped: 0, buckets: 0, finished: true };
    };
    await waitFor('a scheduled loader run held off', () => heldOff > 0, 30_000, 10);
    const store = new DynamoScheduleStore(doc, stack.tableName);
    // The jobs below are due in seconds, as if registered 15 minutes ago: no loader has passed their minute yet (the
    // other case's loaders did, on this file's table): start from no cursor, as a loader's first run.
    await doc.send(new DeleteCommand({ TableName: stack.tableName, Key: loaderCursorKey() }));
    const dueAt = Date.now() + 8_000;
    const specs = jobsFor(`sched`, 12, () => 300, at === 'queue.send' ? 0 : 100).map(
      (spec) => ({ ...spec, notBefore: new Date(dueAt).toISOString() }) as JobSpec,
    );
    for (const spec of specs) {
      const record = { ...registeredRecord(spec, Date.now()), state: JobState.Scheduled };
      expect(await store.schedule(record, { bucket: dueBucket(dueAt, spec.id), sortKey: dueSortKey(dueAt, spec.id) })).toBe(true);
    }

    // A loader whose process dies there, loading one job at a time.
    const crash = new CrashSwitch();
    crash.armOn(at, { occurrence: 5, when: 'after' });
    const { deps } = container();
    const dying = new Loader(
      { ...deps, queue: crashable(deps.queue, crash, 'queue'), schedule: crashable(deps.schedule!, crash, 'schedule') },
      { concurrency: 1 },
    );
    await expect(dying.run()).rejects.toBeInstanceOf(SimulatedCrash);
    const states = await Promise.all(specs.map(async (spec) => (await deps.ledger.get(spec.id))!.state));
    expect(states.filter((s) => s === JobState.Scheduled)).toHaveLength(at === 'queue.send' ? 8 : 7);
    restoreLoader();

    // The reconciler's run (its loader first) and another loader at the same time.
    const [, second] = await Promise.all([stack.reconcileNow(), new Loader(deps).run()]);
    expect(second.finished).toBe(true);

    await expectEveryJobRanOnce(stack, { pool: 'sched', limit: POOLS.sched, ids: specs.map((s) => s.id), timeoutMs: 60_000 });
    // None started before its time.
    const runs = [
      ...runsOf(
        stack,
        specs.map((s) => s.id),
      ).values(),
    ].flat();
    expect(runs).toHaveLength(specs.length);
    for (const run of runs) expect(run.startCallAt).toBeGreaterThanOrEqual(dueAt);
  },
  90_000,
);
