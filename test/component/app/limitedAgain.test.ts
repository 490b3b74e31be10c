import { DynamoJobLedger } from '../../../shared/adapters/dynamodb/jobLedger';
import { DynamoLeaseStore } from '../../../shared/adapters/dynamodb/leaseStore';
import { AcquireResult } from '../../../shared/app/acquireJob';
import { noMetrics, silentLog, type SluiceDeps } from '../../../shared/app/deps';
import { Drift } from '../../../shared/app/reconcile';
import { sluiceServices } from '../../../shared/app/services';
import { UNLIMITED_COUNTER_LIMIT } from '../../../shared/domain/unlimited';
import { systemClock } from '../../../shared/ports/clock';
import { everyKind } from '../../support/fakes/everyKind';
import { FakeStarter } from '../../support/fakes/fakeStarter';
import { TEST_SETTINGS } from '../../support/fakes/makeDeps';
import { seededRandom } from '../../support/fakes/manualClock';
import { RecordingJobQueue } from '../../support/fakes/recordingJobQueue';
import { startDynalite, useDynamoFixtures } from '../contract/dynamoFixtures';

// A pool switched from "unlimited" back to a limit while its jobs run uncounted, through the real services and the
// DynamoDB adapters on dynalite with the fault layer: the take refused on the unlimited pool's counter switches it to
// adopting, the reconciler counts the running jobs on it (adopt), then lets jobs in only as fewer than the limit run.
const fixtures = useDynamoFixtures(startDynalite);

test('limited again on DynamoDB: no job starts until fewer than the new limit run, counting those started while it was unlimited', async () => {
  const table = await fixtures().table();
  try {
    const doc = fixtures().doc;
    const queue = new RecordingJobQueue(systemClock);
    const starters = everyKind((kind) => new FakeStarter(kind, { idempotent: true, clock: systemClock }));
    const settings = { ...TEST_SETTINGS, pools: { default: 1 } as Record<string, number>, unlimitedPools: ['fanout'] };
    // The system's clock, moved on by the test when the adoption's settle time passes (adoptSettleSeconds).
    let skew = 0;
    const clock = { now: () => systemClock.now() + skew, sleepUntil: (at: number) => systemClock.sleepUntil(at - skew) };
    const deps: SluiceDeps = {
      leases: new DynamoLeaseStore(doc, table.name),
      ledger: new DynamoJobLedger(doc, table.name),
      queue,
      starters: starters as never,
      clock,
      random: seededRandom(7),
      log: silentLog,
      metrics: noMetrics,
      settings,
    };
    const { acquirer, reconciler, completeRun } = sluiceServices(deps);
    const glue = starters.glue as FakeStarter;
    const job = (id: string) => ({
      messageId: `m-${id}`,
      body: JSON.stringify({ kind: 'glue', pool: 'fanout', id, jobName: `glue-${id}` }),
    });
    const deliverSent = async () => {
      for (let round = 0; round < 20; round++) {
        const sent = queue.takeSent();
        if (sent.length === 0) return;
        for (const message of sent)
          await acquirer.process({ messageId: message.messageId, body: message.body, reservedHint: message.reserved });
      }
    };
    const end = async (id: string) => {
      await completeRun.complete(glue.finish(glue.runsOf(id)[0]!.executionId, 'succeeded'));
      await deliverSent();
    };

    // Unlimited: three jobs run uncounted; a reconcile creates the pool's counter (the limit no pool reaches).
    for (const id of ['u0', 'u1', 'u2']) expect(await acquirer.process(job(id))).toBe(AcquireResult.Started);
    await reconciler.run();
    expect(await deps.leases.getPool('fanout')).toEqual({ name: 'fanout', limit: UNLIMITED_COUNTER_LIMIT, inUse: 0, unlimited: true });

    // The deploy: a limit of 2. Before any reconcile, a job arriving waits (3 run); the counter now adopts.
    Object.assign(settings, { pools: { default: 1, fanout: 2 }, unlimitedPools: [] });
    for (const id of ['n0', 'n1']) expect(await acquirer.process(job(id))).toBe(AcquireResult.Waiting);
    expect(await deps.leases.getPool('fanout')).toEqual({
      name: 'fanout',
      limit: 2,
      inUse: 0,
      adopting: true,
      adoptingSince: expect.any(Number),
    });

    // The reconciler counts the three; the adoption has not settled (an acquirer on the old configuration may still
    // take slots), so the pool still admits nothing.
    expect((await reconciler.run()).drift).toMatchObject({ [Drift.Adopted]: 3 });
    expect(await deps.leases.getPool('fanout')).toMatchObject({ limit: 2, inUse: 3, adopting: true });
    // Settled: the next run finds nothing more to count, ends adopting, and lets nobody in (3 of 2 in use).
    skew += settings.adoptSettleMs;
    await reconciler.run();
    expect(await deps.leases.getPool('fanout')).toEqual({ name: 'fanout', limit: 2, inUse: 3 });
    expect(await deps.ledger.get('u0')).toMatchObject({ state: 'running', lease: { pool: 'fanout' } });
    expect((await deps.ledger.get('u0'))!.lease).not.toHaveProperty('uncounted');

    // Jobs end: the waiting ones start only as fewer than 2 run, and never more than 2 run from then on.
    const running = () => glue.inProgress().length;
    await end('u0');
    expect(running()).toBe(2);
    await end('u1');
    expect(running()).toBe(2);
    await end('u2');
    expect(running()).toBe(2);
    expect((await deps.ledger.get('n0'))!.state).toBe('running');
    expect((await deps.ledger.get('n1'))!.state).toBe('running');
    expect(await deps.leases.getPool('fanout')).toEqual({ name: 'fanout', limit: 2, inUse: 2 });
  } finally {
    await table.drop();
  }
}, 60_000);
