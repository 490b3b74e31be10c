import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoJobLedger } from '../../../shared/adapters/dynamodb/jobLedger';
import { DynamoLeaseStore } from '../../../shared/adapters/dynamodb/leaseStore';
import { CompletionResult } from '../../../shared/app/completeRun';
import { silentLog, noMetrics, type SluiceDeps } from '../../../shared/app/deps';
import { sluiceServices } from '../../../shared/app/services';
import { JobState } from '../../../shared/domain/jobState';
import { systemClock } from '../../../shared/ports/clock';
import { SluiceDetailType } from '../../../shared/ports/eventPublisher';
import { DynamoFault, installDynamoFaults } from '../../../local/faults/dynamoFaults';
import { everyKind } from '../../support/fakes/everyKind';
import { FakeStarter } from '../../support/fakes/fakeStarter';
import { RecordingEvents } from '../../support/fakes/inMemorySetRuns';
import { seededRandom } from '../../support/fakes/manualClock';
import { RecordingJobQueue } from '../../support/fakes/recordingJobQueue';
import { TEST_SETTINGS } from '../../support/fakes/makeDeps';
import { startDynalite, useDynamoFixtures } from '../contract/dynamoFixtures';

// A release whose answer is lost, through the real adapters on dynalite: the fault layer applies the releaser's
// transaction, drops its answer (a connection reset), and the SDK's retry meets its own effect as a cancelled
// transaction, as DynamoDB Local and dynalite answer it (AWS would answer the retry's ClientRequestToken with success
// for ten minutes: https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html).
// The releaser must know the write for its own: the job's end announced, the slot's waiter started at once.
const fixtures = useDynamoFixtures(startDynalite);
const POOL = 'lost';

async function world(limit: number) {
  const table = await fixtures().table();
  const doc = DynamoDBDocumentClient.from(fixtures().client, { marshallOptions: { removeUndefinedValues: true } });
  // The first attempt of the first transaction that writes the releasing job's record loses its answer.
  let armed: string | undefined;
  const lost: string[] = [];
  installDynamoFaults(doc, {
    policy: (request) => {
      if (!armed || request.operation !== 'TransactWriteItems' || request.attempt !== 1) return undefined;
      if (!request.items.some((item) => item.includes(`JOB#${armed}|`))) return undefined;
      lost.push(armed);
      armed = undefined;
      return DynamoFault.LostAnswer;
    },
  });
  const starters = everyKind((kind) => new FakeStarter(kind, { idempotent: true, clock: systemClock }));
  const events = new RecordingEvents();
  const deps: SluiceDeps = {
    leases: new DynamoLeaseStore(doc, table.name),
    ledger: new DynamoJobLedger(doc, table.name),
    queue: new RecordingJobQueue(systemClock),
    starters: starters as never,
    clock: systemClock,
    random: seededRandom(7),
    log: silentLog,
    metrics: noMetrics,
    events,
    settings: { ...TEST_SETTINGS, pools: { [POOL]: limit } },
  };
  await new DynamoLeaseStore(doc, table.name).createPool(POOL, limit);
  const services = sluiceServices(deps);
  const deliver = (id: string) =>
    services.acquirer.process({ messageId: `m-${id}`, body: JSON.stringify({ kind: 'appflow', pool: POOL, id, flowName: `flow-${id}` }) });
  const appflow = starters.appflow as FakeStarter;
  return {
    table,
    deps,
    services,
    events,
    appflow,
    deliver,
    lost,
    loseNextRelease: (jobId: string) => void (armed = jobId),
    finish: async (jobId: string) => appflow.finish((await deps.ledger.get(jobId))!.executionId!, 'succeeded'),
  };
}

test('a pass whose answer was lost: released, the end announced once, the waiter started at once', async () => {
  const w = await world(1);
  try {
    await w.deliver('r1');
    await w.deliver('w1');
    expect((await w.deps.ledger.get('w1'))!.state).toBe(JobState.Waiting);
    w.loseNextRelease('r1');
    expect(await w.services.completeRun.complete(await w.finish('r1'))).toBe(CompletionResult.Released);
    expect(w.lost).toEqual(['r1']);
    expect((await w.deps.ledger.get('r1'))!.state).toBe(JobState.Succeeded);
    expect((await w.deps.ledger.get('w1'))!.state).toBe(JobState.Running);
    expect(w.events.published.filter((e) => e.detailType === SluiceDetailType.JobEnded).map((e) => e.detail.jobId)).toEqual(['r1']);
  } finally {
    await w.table.drop();
  }
});

test('a free whose answer was lost: released, the end announced once', async () => {
  const w = await world(2);
  try {
    await w.deliver('r1');
    w.loseNextRelease('r1');
    expect(await w.services.completeRun.complete(await w.finish('r1'))).toBe(CompletionResult.Released);
    expect(w.lost).toEqual(['r1']);
    expect((await w.deps.ledger.get('r1'))!.state).toBe(JobState.Succeeded);
    expect(w.events.published.filter((e) => e.detailType === SluiceDetailType.JobEnded).map((e) => e.detail.jobId)).toEqual(['r1']);
  } finally {
    await w.table.drop();
  }
});
