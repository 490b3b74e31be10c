import { AcquireResult } from '../../../shared/app/acquireJob';
import { MetricName } from '../../../shared/app/deps';
import { CancelJob } from '../../../shared/app/cancelJob';
import { announceJobEnd } from '../../../shared/app/jobSetEnds';
import { MAX_REASON_CHARS } from '../../../shared/app/jobEndEvent';
import { SluiceDetailType } from '../../../shared/ports/eventPublisher';
import { appflowJob, glueJob, makeDeps, messageOf, startGlueJob, T0 } from '../../support/fakes';

/** Each job's end is announced once on the bus (`Sluice Job Ended`), with what a rule needs to act on it. */
describe('Sluice Job Ended', () => {
  const ended = (world: ReturnType<typeof makeDeps>) =>
    world.jobEvents.published.filter((e) => e.detailType === SluiceDetailType.JobEnded).map((e) => e.detail);

  test('a run that succeeded: its id, pool, kind, target, run, attempts and times', async () => {
    const world = makeDeps({ settings: { pools: { default: 1 } } });
    const run = await startGlueJob(world, 'nightly-1');
    world.clock.advance(5000);
    await world.completeRun.complete(world.starters.glue.finish(run, 'succeeded'));
    expect(ended(world)).toEqual([
      {
        jobId: 'nightly-1',
        pool: 'default',
        kind: 'glue',
        target: 'glue-nightly-1',
        outcome: 'succeeded',
        runId: run,
        attempts: 1,
        queuedAt: new Date(T0).toISOString(),
        startedAt: new Date(T0).toISOString(),
        endedAt: new Date(T0 + 5000).toISOString(),
      },
    ]);
  });

  test('a run that failed says why; a duplicate completion event announces nothing more', async () => {
    const world = makeDeps({ settings: { pools: { default: 1 } } });
    const run = await startGlueJob(world, 'g');
    const completion = { ...world.starters.glue.finish(run, 'failed'), detail: 'x'.repeat(MAX_REASON_CHARS + 50) };
    await world.completeRun.complete(completion);
    await world.completeRun.complete(completion);
    expect(ended(world)).toHaveLength(1);
    expect(ended(world)[0]).toMatchObject({ jobId: 'g', outcome: 'failed', reason: 'x'.repeat(MAX_REASON_CHARS) });
  });

  test('a job that can never run is announced dead-lettered, with the reason its DLQ copy carries', async () => {
    const world = makeDeps({ settings: { pools: { default: 1 } } });
    expect(await world.acquirer.process(messageOf(appflowJob('lost', 'nowhere')))).toBe(AcquireResult.DeadLettered);
    expect(ended(world)).toEqual([
      expect.objectContaining({ jobId: 'lost', pool: 'nowhere', kind: 'appflow', target: 'flow-lost', outcome: 'dead-lettered' }),
    ]);
    expect(ended(world)[0]!.reason).toMatch(/unknown pool 'nowhere'/);
    expect(ended(world)[0]).not.toHaveProperty('runId');
  });

  test('a cancel is announced by the canceller', async () => {
    const world = makeDeps({ settings: { pools: { default: 1 } } });
    await startGlueJob(world, 'holder');
    expect(await world.acquirer.process(messageOf(glueJob('w')))).toBe(AcquireResult.Waiting);
    const cancel = new CancelJob({ ...world.deps, schedule: world.store, onCancelled: (record) => announceJobEnd(world.deps, record) });
    expect((await cancel.cancel('w')).outcome).toBe('cancelled');
    expect(ended(world)).toEqual([expect.objectContaining({ jobId: 'w', outcome: 'cancelled' })]);
  });

  test('a bus that refuses: the end stands, the failure is logged and counted, nothing is thrown', async () => {
    const world = makeDeps({ settings: { pools: { default: 1 } } });
    const run = await startGlueJob(world, 'g');
    world.deps.events = { publish: () => Promise.reject(new Error('AccessDeniedException')) };
    await world.completeRun.complete(world.starters.glue.finish(run, 'succeeded'));
    expect(world.ledger.peek('g')!.state).toBe('succeeded');
    expect(world.metrics.totals.get(MetricName.JobEndNotAnnounced)).toBe(1);
    expect(world.log.entries.some((e) => e.level === 'warn' && /could not be announced/.test(e.message))).toBe(true);
  });
});

describe('Sluice Job Ended, dead-lettered by two copies at once', () => {
  test('both copies may send its DLQ copy, one announces its end', async () => {
    const world = makeDeps({ settings: { pools: { default: 1 } } });
    const body = messageOf(appflowJob('twice', 'nowhere'));
    await Promise.all([world.acquirer.process(body), world.acquirer.process({ ...body, messageId: 'copy' })]);
    const ends = world.jobEvents.published.filter((e) => e.detailType === SluiceDetailType.JobEnded);
    expect(ends.map((e) => e.detail.jobId)).toEqual(['twice']);
  });
});
