import { AcquireResult } from '../../../shared/app/acquireJob';
import { MAX_JOB_BYTES, parseJob } from '../../../shared/app/parseJob';
import { deliverSent, glueJob, makeQueueDeps, messageOf, startGlueJob } from '../../support/fakes';

/**
 * The bodies Sluice sends and dead-letters. A body Sluice wrote itself must always be readable by Sluice, and bad input
 * must never hold a slot; a message dead-lettered on arrival keeps the sender's body byte for byte.
 */

/** A Glue job's body, without `pool` (so its default is filled in when Sluice writes it), exactly `bytes` long. */
function bodyWithoutPool(id: string, bytes: number): string {
  const skeleton = JSON.stringify({ id, kind: 'glue', jobName: 'etl', arguments: { '--pad': '' } });
  return JSON.stringify({ id, kind: 'glue', jobName: 'etl', arguments: { '--pad': 'x'.repeat(bytes - skeleton.length) } });
}

describe('a job near the size cap', () => {
  test('one whose body fits only without its defaults is refused on arrival, holding nothing; no body Sluice sends is unreadable', async () => {
    // Prepare: one slot, held; the big job arrives while it is held
    const world = makeQueueDeps({ settings: { pools: { default: 1 } } });
    const run = await startGlueJob(world, 'r');
    const body = bodyWithoutPool('big', MAX_JOB_BYTES);
    // Act: its arrival, then the slot freed (a hand-off would wake it with Sluice's own copy of its body)
    const arrival = await world.acquirer.process(messageOf(body, 'sqs-1'));
    await world.completeRun.complete(world.starters.glue.finish(run, 'succeeded'));
    const later = await deliverSent(world);
    await world.reconciler.run();
    // Assess: refused at once, so it never held a slot, and every body Sluice sent parses
    expect(arrival).toBe(AcquireResult.DeadLettered);
    expect(later.map((d) => d.result)).not.toContain(AcquireResult.DeadLettered);
    expect(world.ledger.peek('big')).toBeUndefined();
    expect(world.leases.poolView('default')).toEqual(expect.objectContaining({ inUse: 0, holders: {} }));
    for (const sent of world.queue.sent) expect(() => parseJob(sent.body, 'redelivered')).not.toThrow();
    expect(world.queue.deadLettered).toEqual([
      { body, reason: expect.stringMatching(/with its defaults filled in/), context: { messageId: 'sqs-1' } },
    ]);
  });

  test('one that fits with its defaults waits, is woken with Sluice\'s own copy, and runs', async () => {
    const world = makeQueueDeps({ settings: { pools: { default: 1 } } });
    const run = await startGlueJob(world, 'r');
    const body = bodyWithoutPool('big', MAX_JOB_BYTES - ',"pool":"default"'.length);
    expect(await world.acquirer.process(messageOf(body))).toBe(AcquireResult.Waiting);
    await world.completeRun.complete(world.starters.glue.finish(run, 'succeeded'));
    expect((await deliverSent(world)).map((d) => d.result)).toEqual([AcquireResult.Started]);
    expect(Buffer.byteLength(world.queue.sent[0]!.body)).toBe(MAX_JOB_BYTES);
    expect(world.ledger.peek('big')!.state).toBe('running');
    expect(world.queue.deadLettered).toEqual([]);
  });
});

describe('the DLQ copy of a message dead-lettered on arrival is the body as it was sent', () => {
  test('an unknown pool: the sender\'s body byte for byte (not re-encoded with its defaults), its job and message ids as attributes', async () => {
    const world = makeQueueDeps();
    // Key order, spacing and an escaped character: re-encoding would change every one of them.
    const body = '{ "kind": "glue", "jobName": "etl",\n  "pool": "nowhere", "arguments": {"--day": "2026\\u002d11\\u002d22"} }';
    expect(await world.acquirer.process(messageOf(body, 'sqs-42'))).toBe(AcquireResult.DeadLettered);
    expect(world.queue.deadLettered).toEqual([
      {
        body,
        reason: expect.stringMatching(/unknown pool 'nowhere'/),
        context: { jobId: 'sqs-42', pool: 'nowhere', messageId: 'sqs-42' },
      },
    ]);
  });

  test('another job under a known id: the body as sent, with the message id', async () => {
    const world = makeQueueDeps();
    await startGlueJob(world, 'j1');
    const body = JSON.stringify({ ...glueJob('j1'), jobName: 'other' }, null, 2);
    expect(await world.acquirer.process(messageOf(body, 'sqs-7'))).toBe(AcquireResult.DeadLettered);
    expect(world.queue.deadLettered).toEqual([
      { body, reason: expect.stringMatching(/already used for a different job/), context: { jobId: 'j1', pool: 'default', messageId: 'sqs-7' } },
    ]);
  });

  test("a job given up after its start failed has no sender's body at hand: its copy is Sluice's encoding of the job", async () => {
    const world = makeQueueDeps();
    world.starters.glue.failNextStarts(1, 'permanent', 'EntityNotFoundException');
    const body = `  ${JSON.stringify({ kind: 'glue', id: 'g1', jobName: 'gone' })}  `;
    expect(await world.acquirer.process(messageOf(body, 'sqs-9'))).toBe(AcquireResult.DeadLettered);
    expect(world.queue.deadLettered).toEqual([
      {
        body: JSON.stringify({ id: 'g1', pool: 'default', kind: 'glue', jobName: 'gone' }),
        reason: expect.stringMatching(/rejected/),
        context: { jobId: 'g1', pool: 'default' },
      },
    ]);
  });
});
