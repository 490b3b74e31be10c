import { AcquireResult } from '../../../shared/app/acquireJob';
import { MetricName } from '../../../shared/app/deps';
import { appflowJob, makeQueueDeps as makeDeps, messageOf, type FakeWorld } from '../../support/fakes';

/**
 * HandOffLatency: from the wake-up message of a job a slot was reserved for (its SQS SentTimestamp, passed as sentAt)
 * to the moment its start call returned. Only reserved jobs that started report it.
 */

/** a and b run (limit 2), c waits; a ends, so c gets a's slot and its wake-up is sent. Returns that message. */
async function handedOff(world: FakeWorld) {
  for (const id of ['a', 'b']) expect(await world.acquirer.process(messageOf(appflowJob(id)))).toBe(AcquireResult.Started);
  expect(await world.acquirer.process(messageOf(appflowJob('c')))).toBe(AcquireResult.Waiting);
  const runOfA = world.ledger.peek('a')!.executionId!;
  await world.completeRun.complete(world.starters.appflow.finish(runOfA, 'succeeded'));
  const [wakeUp, ...others] = world.queue.takeSent();
  expect(others).toEqual([]);
  expect(wakeUp).toMatchObject({ reserved: true, body: JSON.stringify(appflowJob('c')) });
  return wakeUp!;
}

const latencies = (world: FakeWorld) => world.metrics.durations.filter((d) => d.name === MetricName.HandOffLatency);

describe('HandOffLatency', () => {
  test('a reserved job reports the time from its wake-up being sent to its run started, in its pool', async () => {
    // Prepare: the wake-up is sent now; it reaches the acquirer 30 ms later and the start call takes 12 ms.
    const world = makeDeps();
    const wakeUp = await handedOff(world);
    const sentAt = world.clock.now();
    world.clock.advance(30);
    world.starters.appflow.onStart = async () => void world.clock.advance(12);
    // Act
    const result = await world.acquirer.process({ messageId: wakeUp.messageId, body: wakeUp.body, reservedHint: true, sentAt });
    // Assess: measured when the start returned, not when the message arrived
    expect(result).toBe(AcquireResult.Started);
    expect(latencies(world)).toEqual([{ name: MetricName.HandOffLatency, value: 42, pool: 'default' }]);
    // Only the hand-off: the jobs started from their own messages reported none.
    expect(world.metrics.durations).toHaveLength(1);
  });

  test('a clock behind the sender never reports a negative latency', async () => {
    const world = makeDeps();
    const wakeUp = await handedOff(world);
    await world.acquirer.process({ messageId: wakeUp.messageId, body: wakeUp.body, reservedHint: true, sentAt: world.clock.now() + 5 });
    expect(latencies(world).map((d) => d.value)).toEqual([0]);
  });

  test('no latency for a job started from its own message, nor for a reserved message without a send time', async () => {
    const fresh = makeDeps();
    const started = await fresh.acquirer.process({ ...messageOf(appflowJob('fresh')), sentAt: fresh.clock.now() - 500 });
    expect(started).toBe(AcquireResult.Started);
    expect(fresh.metrics.durations).toEqual([]);

    const world = makeDeps();
    const wakeUp = await handedOff(world);
    expect(await world.acquirer.process({ messageId: wakeUp.messageId, body: wakeUp.body, reservedHint: true })).toBe(
      AcquireResult.Started,
    );
    expect(world.metrics.durations).toEqual([]);
  });

  test('no latency when the reserved job did not start: a stale hint parks it, a throttled start retries it', async () => {
    // A hint for a job that holds no slot in a full pool: parked, not started.
    const parked = makeDeps();
    for (const id of ['a', 'b']) await parked.acquirer.process(messageOf(appflowJob(id)));
    const stale = await parked.acquirer.process({ ...messageOf(appflowJob('c')), reservedHint: true, sentAt: parked.clock.now() });
    expect(stale).toBe(AcquireResult.Waiting);
    expect(parked.metrics.durations).toEqual([]);

    // A real hand-off whose start is throttled: retried later, no start to measure yet.
    const throttled = makeDeps();
    const wakeUp = await handedOff(throttled);
    throttled.starters.appflow.failNextStarts(1, 'transient');
    const result = await throttled.acquirer.process({
      messageId: wakeUp.messageId,
      body: wakeUp.body,
      reservedHint: true,
      sentAt: throttled.clock.now(),
    });
    expect(result).toBe(AcquireResult.RetryScheduled);
    expect(throttled.metrics.durations).toEqual([]);
  });
});
