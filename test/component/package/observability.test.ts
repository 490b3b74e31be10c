import { Metrics } from '@aws-lambda-powertools/metrics';
import { EmfMetrics } from '../../../shared/adapters/powertools/emfMetrics';
import { emitPoolGauges, GaugeName, publishPoolGauges, readPoolGauges } from '../../../shared/adapters/powertools/poolGauges';
import { MetricName, type SluiceSettings } from '../../../shared/app/deps';
import { InMemoryStore } from '../../support/fakes/inMemoryStore';
import { ManualClock } from '../../support/fakes/manualClock';
import { receiver, unit } from '../../support/demands';
import { everyKind } from '../../support/fakes/everyKind';
import { makeDeps } from '../../support/fakes/makeDeps';
import { startGlueJob } from '../../support/fakes/drive';
import { Reconciler } from '../../../shared/app/reconcile';
import type { JobSpec } from '../../../shared/kinds/registry';
import { WaitCause } from '../../../shared/domain/stuckPools';
import { UNLIMITED_COUNTER_LIMIT } from '../../../shared/domain/unlimited';
import { waitKey } from '../../../shared/domain/waiting';

/**
 * What the functions write for CloudWatch (EMF lines): the alarms in serverless.yml read the service-wide dimension
 * set, the dashboard the per-pool one (template.test.ts checks the alarms' names against these).
 */

interface EmfLine {
  _aws: { CloudWatchMetrics: Array<{ Namespace: string; Dimensions: string[][]; Metrics: Array<{ Name: string; Unit: string }> }> };
  [key: string]: unknown;
}

/** The EMF lines Powertools prints while `act` runs. */
function captureEmf(act: () => void): EmfLine[] {
  const chunks: string[] = [];
  const spy = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    chunks.push(String(chunk));
    return true;
  });
  try {
    act();
  } finally {
    spy.mockRestore();
  }
  return chunks
    .join('')
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as EmfLine)
    .filter((line) => line._aws);
}

const newMetrics = () => new Metrics({ namespace: 'Sluice', serviceName: 'sluice' });
const definition = (line: EmfLine) => line._aws.CloudWatchMetrics[0]!;

const metricsDisabled = process.env.POWERTOOLS_METRICS_DISABLED;
beforeAll(() => {
  // Jest may run with POWERTOOLS_DEV or the local stack's POWERTOOLS_METRICS_DISABLED; this file reads the real output.
  process.env.POWERTOOLS_METRICS_DISABLED = 'false';
});
afterAll(() => {
  if (metricsDisabled === undefined) delete process.env.POWERTOOLS_METRICS_DISABLED;
  else process.env.POWERTOOLS_METRICS_DISABLED = metricsDisabled;
});

describe('EmfMetrics', () => {
  test('a counter with a pool is published per pool and for the whole service, from one line', () => {
    const lines = captureEmf(() => new EmfMetrics(newMetrics()).count(MetricName.DeadLettered, 1, 'etl'));
    expect(lines).toHaveLength(1);
    expect(definition(lines[0]!)).toEqual({
      Namespace: 'Sluice',
      Dimensions: [['service', 'pool'], ['service']],
      Metrics: [{ Name: 'DeadLettered', Unit: 'Count' }],
    });
    expect(lines[0]).toMatchObject({ service: 'sluice', pool: 'etl', DeadLettered: 1 });
  });

  test('a counter without a pool has the service dimension only', () => {
    const [line] = captureEmf(() => new EmfMetrics(newMetrics()).count(MetricName.IgnoredEvents));
    expect(definition(line!).Dimensions).toEqual([['service']]);
    expect(line).toMatchObject({ IgnoredEvents: 1 });
  });

  test('a duration is in milliseconds (HandOffLatency)', () => {
    const [line] = captureEmf(() => new EmfMetrics(newMetrics()).milliseconds(MetricName.HandOffLatency, 412, 'etl'));
    expect(definition(line!).Metrics).toEqual([{ Name: 'HandOffLatency', Unit: 'Milliseconds' }]);
    expect(definition(line!).Dimensions).toEqual([['service', 'pool'], ['service']]);
    expect(line).toMatchObject({ HandOffLatency: 412 });
  });

  test('consecutive metrics do not leak dimensions into each other', () => {
    const emf = new EmfMetrics(newMetrics());
    const lines = captureEmf(() => {
      emf.count(MetricName.Starts, 1, 'etl');
      emf.count(MetricName.IgnoredEvents);
    });
    expect(lines.map((l) => definition(l).Dimensions)).toEqual([[['service', 'pool'], ['service']], [['service']]]);
    expect(lines[1]!.pool).toBeUndefined();
  });
});

describe('a run past its maximum run time', () => {
  test("the reconciler's OverdueRuns goes out for the whole service (what the run-past-maximum alarm reads) on each run", async () => {
    const world = makeDeps();
    const reconciler = new Reconciler({ ...world.deps, metrics: new EmfMetrics(newMetrics()) });
    await startGlueJob(world, 'long');
    world.clock.advance(world.settings.maxRunMs.glue + 1);
    const chunks: string[] = [];
    const spy = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      chunks.push(String(chunk));
      return true;
    });
    try {
      await reconciler.run();
      await reconciler.run();
    } finally {
      spy.mockRestore();
    }
    const lines = chunks
      .join('')
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as EmfLine)
      .filter((line) => line._aws && MetricName.OverdueRuns in line);
    expect(lines).toHaveLength(2);
    for (const line of lines) {
      expect(definition(line)).toEqual({
        Namespace: 'Sluice',
        Dimensions: [['service', 'pool'], ['service']],
        Metrics: [{ Name: MetricName.OverdueRuns, Unit: 'Count' }],
      });
      expect(line).toMatchObject({ service: 'sluice', pool: 'default', OverdueRuns: 1 });
    }
  });
});

describe('pool gauges', () => {
  const HOUR = 3_600_000;
  const settings: Pick<SluiceSettings, 'maxRunMs' | 'startGraceMs' | 'reservationGraceMs' | 'backoff'> = {
    maxRunMs: everyKind(() => 6 * HOUR, { glue: 48 * HOUR }),
    startGraceMs: 90_000,
    reservationGraceMs: 120_000,
    backoff: { baseSeconds: 2, maxSeconds: 900, retryForSeconds: 6 * 3600 },
  };
  // every path that frees a slot has passed by then: the longest run, the retry budget, both graces
  const graces = settings.startGraceMs + settings.reservationGraceMs + settings.backoff.retryForSeconds * 1000;

  async function world() {
    const clock = new ManualClock();
    const now = clock.now();
    const leases = new InMemoryStore();
    await leases.createPool('etl', 3);
    /** A job of `kind` holding a slot of etl since `since`. */
    const hold = async (jobId: string, kind: 'glue' | 'appflow', since: number) => {
      const spec: JobSpec =
        kind === 'glue' ? { id: jobId, pool: 'etl', kind, jobName: 'j' } : { id: jobId, pool: 'etl', kind, flowName: 'f' };
      const { record } = await leases.register(spec, since);
      expect((await leases.take(unit('etl'), { jobId, version: record.version, to: 'starting' }, since)).outcome).toBe('taken');
    };
    // Past the Glue deadline by 1 ms: stuck.
    await hold('glue-stuck', 'glue', now - settings.maxRunMs.glue - graces - 1);
    // An AppFlow run at exactly its deadline: not overdue yet.
    await hold('flow-long', 'appflow', now - settings.maxRunMs.appflow - graces);
    // The first in line on etl could run 30 minutes ago (its wait key's time), though it first came earlier.
    for (const [i, id] of ['w1', 'w2'].entries()) {
      const eligible = now - (30 - i) * 60_000;
      await leases.addWaiter({ pool: 'etl', jobId: id, kind: 'glue', waitKey: waitKey(eligible, id), body: '{}', since: eligible - HOUR });
    }
    await leases.createPool('default', 8);
    // Paused with a job waiting 10 minutes.
    await leases.createPool('crm', 0);
    await leases.addWaiter({
      pool: 'crm',
      jobId: 'c1',
      kind: 'glue',
      waitKey: waitKey(now - 600_000, 'c1'),
      body: '{}',
      since: now - 600_000,
    });
    return { leases, clock, settings: settings as SluiceSettings };
  }

  test('reads limit, slots in use, waiting jobs, the slots held past their deadline and how long the first in line waited, per pool', async () => {
    expect(await readPoolGauges(await world())).toEqual([
      { pool: 'crm', limit: 0, inUse: 0, waiting: 1, overdue: [], wait: { gate: 'crm', cause: WaitCause.Paused, waitSeconds: 600 } },
      { pool: 'default', limit: 8, inUse: 0, waiting: 0, overdue: [] },
      {
        pool: 'etl',
        limit: 3,
        inUse: 2,
        waiting: 2,
        overdue: ['glue-stuck'],
        wait: { gate: 'etl', cause: WaitCause.SlotsFree, waitSeconds: 1800 },
      },
    ]);
  });

  test('an unlimited pool: its holders from every shard are its slots in use (overdue ones named), and it reports no limit', async () => {
    const deps = await world();
    const settings = { ...deps.settings, unlimitedPools: ['fanout'] };
    const leases = deps.leases as InMemoryStore;
    await leases.createPool('fanout', UNLIMITED_COUNTER_LIMIT);
    const graces = settings.backoff.retryForSeconds * 1000 + settings.startGraceMs + settings.reservationGraceMs;
    const now = deps.clock.now();
    for (const [jobId, since] of [
      ['f1', now],
      ['f2', now],
      ['f-stuck', now - settings.maxRunMs.glue - graces - 1],
    ] as const) {
      const { record } = await leases.register({ id: jobId, pool: 'fanout', kind: 'glue', jobName: `job-${jobId}` } as JobSpec, since);
      const taken = await leases.take({ ...unit('fanout'), uncounted: true }, { jobId, version: record.version, to: 'starting' }, since);
      expect(taken.outcome).toBe('taken');
    }
    const fanout = (await readPoolGauges({ ...deps, settings })).find((g) => g.pool === 'fanout');
    expect(fanout).toEqual({ pool: 'fanout', limit: 0, inUse: 3, waiting: 0, overdue: ['f-stuck'] });
  });

  test('publishes one line per pool and one for the service, with the names the dashboard and the alarm read', async () => {
    const deps = await world();
    const gauges = await readPoolGauges(deps);
    const lines = captureEmf(() => publishPoolGauges(newMetrics(), gauges));
    expect(lines).toHaveLength(4);
    const names = Object.values(GaugeName).sort();
    for (const line of lines)
      expect(
        definition(line)
          .Metrics.map((m) => m.Name)
          .sort(),
      ).toEqual(names);
    expect(lines.map((l) => definition(l).Dimensions)).toEqual([
      [['service', 'pool']],
      [['service', 'pool']],
      [['service', 'pool']],
      [['service']],
    ]);
    expect(lines[0]).toMatchObject({ pool: 'crm', Waiting: 1, OldestWaitSeconds: 600, PausedPools: 1 });
    expect(lines[1]).toMatchObject({ pool: 'default', Waiting: 0, OldestWaitSeconds: 0, PausedPools: 0 });
    expect(lines[2]).toMatchObject({
      pool: 'etl',
      SlotsInUse: 2,
      SlotLimit: 3,
      Waiting: 2,
      OverdueLeases: 1,
      OldestWaitSeconds: 1800,
      PausedPools: 0,
    });
    expect(definition(lines[2]!).Metrics.find((m) => m.Name === GaugeName.OldestWaitSeconds)!.Unit).toBe('Seconds');
    // The alarms' metrics, for the service: OverdueLeases summed over pools; the longest wait of any pool (pool-stuck)
    // and the paused pools with jobs waiting.
    expect(lines[3]).toMatchObject({
      service: 'sluice',
      SlotsInUse: 2,
      SlotLimit: 11,
      Waiting: 3,
      OverdueLeases: 1,
      OldestWaitSeconds: 1800,
      PausedPools: 1,
    });
    expect(lines[3]!.pool).toBeUndefined();
  });

  test('with no pools the service line still says 0 overdue (the alarm recovers)', async () => {
    const lines = captureEmf(() => publishPoolGauges(newMetrics(), []));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ OverdueLeases: 0, SlotsInUse: 0, OldestWaitSeconds: 0, PausedPools: 0 });
  });

  test('emitPoolGauges reads, publishes and returns the gauges', async () => {
    const deps = await world();
    let gauges: Awaited<ReturnType<typeof emitPoolGauges>> = [];
    const chunks: string[] = [];
    const spy = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      chunks.push(String(chunk));
      return true;
    });
    try {
      gauges = await emitPoolGauges(deps, newMetrics());
    } finally {
      spy.mockRestore();
    }
    expect(gauges.map((g) => g.pool)).toEqual(['crm', 'default', 'etl']);
    expect(chunks.join('').match(/"OverdueLeases":1/g)).toHaveLength(2);
  });
});
