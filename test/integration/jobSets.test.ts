import type { EventBridgeEvent } from 'aws-lambda';
import { main } from '../../shared/cli/main';
import { loadJobSets } from '../../shared/config/jobSetsFile';
import type { LocalStack } from '../../local/stack';
import { SluiceDetailType, SLUICE_EVENT_SOURCE } from '../../shared/ports/eventPublisher';
import { jobRecord } from '../support/invariants';
import { startTestStack } from '../support/testStack';
import { waitFor } from '../support/waitFor';

/**
 * Issue 11's "done when", on the whole local stack: the daily set of 120 AppFlow flows of docs/examples/jobs.yml,
 * fired by its schedule (the jobSets function, invoked as EventBridge Scheduler does), twice for the same time, runs
 * every job once, never more than the `flows` pool's limit at once, and ends with one `Sluice Job Set Run Completed`
 * event on the bus, with the counts.
 */
const FILE = 'docs/examples/jobs.yml';
const LIMIT = 8;
const daily = loadJobSets(FILE).find((set) => set.name === 'daily-flows')!;
type Completed = EventBridgeEvent<
  string,
  { set: string; run: string; total: number; succeeded: number; failed: number; failedIds: string[] }
>;

let stack: LocalStack;
const completed: Completed[] = [];
beforeAll(async () => {
  stack = await startTestStack({
    env: { POOLS: JSON.stringify({ flows: LIMIT, etl: 2 }), JOB_SETS_FILE: FILE },
    // a few flows fail, by name
    simulator: {
      durationMs: () => 40,
      outcome: (_kind, name) => (name === 'partner-007-refresh' ? 'failed' : 'succeeded'),
      group: (_kind, name) => (name.startsWith('partner-') ? 'flows' : 'other'),
    },
    // The reconciler runs on its (compressed) schedule, as on AWS. On a loaded machine an invocation can pass its
    // timeout half-way (a slot handed over but not claimed, a start claimed but not made, a completion's releaser
    // abandoned): it is the reconciler that repairs those, and without it such a job stayed put and the run never ended
    // (seen with the machine's cores oversubscribed five times: 4 of 120 jobs left reserved, starting and running).
  });
  stack.bus.addRule({
    name: 'test-set-runs',
    pattern: { source: [SLUICE_EVENT_SOURCE], 'detail-type': [SluiceDetailType.SetRunCompleted] },
    target: async (event) => void completed.push(event as Completed),
  });
}, 60_000);
afterAll(() => stack?.stop());

test('a daily set of 120 AppFlow jobs, fired twice for one time: every job once, the limit held, one completion event', async () => {
  expect(daily.jobs).toHaveLength(120);
  const scheduledTime = '2026-11-27T01:00:00Z';
  const [first, second] = await Promise.all([
    stack.fireJobSet('daily-flows', scheduledTime),
    stack.fireJobSet('daily-flows', scheduledTime),
  ]);
  expect([first, second]).toEqual(
    expect.arrayContaining([
      expect.objectContaining({ run: '20261127T0100Z', jobs: 120, created: true }),
      expect.objectContaining({ created: false }),
    ]),
  );
  // The deadline only bounds a failure: 120 jobs through a pool of a few slots take minutes on a loaded machine.
  const [event] = await waitFor('the run completed', async () => (completed.length > 0 ? completed : undefined), 240_000);
  expect(event!.detail).toMatchObject({ set: 'daily-flows', run: '20261127T0100Z', total: 120, succeeded: 119, failed: 1 });
  expect(event!.detail.failedIds).toEqual([`daily-flows.20261127T0100Z.partner-007`]);
  // every job once: 120 runs of 120 distinct flows
  const runs = stack.simulator.runs().filter((r) => r.name.startsWith('partner-'));
  expect([runs.length, new Set(runs.map((r) => r.name)).size]).toEqual([120, 120]);
  expect(stack.simulator.maxObservedConcurrency('flows')).toBeLessThanOrEqual(LIMIT);
  expect(stack.simulator.maxObservedConcurrency('flows')).toBeGreaterThan(1);
  expect((await jobRecord(stack, 'daily-flows.20261127T0100Z.partner-001'))!.state).toBe('succeeded');
  // one event: the reconciler (the safety net for missed counts) finds nothing open
  await stack.reconcileNow();
  expect(completed).toHaveLength(1);
}, 300_000);

describe('sluice sets', () => {
  const out: string[] = [];
  const sluice = (...args: string[]) =>
    main([...args, '--table', stack.tableName, '--queue-url', stack.queueUrl, '--dlq-url', stack.deadLetterUrl], {
      stdout: (text) => void out.push(text),
      stderr: (text) => void out.push(text),
      env: { ...process.env, SLUICE_JOB_SETS_FILE: FILE },
      readInput: () => Promise.reject(new Error('none')),
    });
  const last = () => out[out.length - 1]!;

  test("failed lists every failed job of a run, from the jobs' records", async () => {
    await waitFor('the daily run completed', async () => completed.some((e) => e.detail.run === '20261127T0100Z'), 240_000);
    expect(await sluice('sets', 'failed', 'daily-flows', '20261127T0100Z')).toBe(0);
    expect(last()).toBe('daily-flows.20261127T0100Z.partner-007');
    expect(await sluice('sets', 'failed', 'daily-flows', 'nope')).toBe(1);
    expect(last()).toContain("job set 'daily-flows' has no run 'nope'");
  }, 300_000);

  test('run-now runs the set once per invocation id; runs lists it; list shows the sets; pause and resume', async () => {
    expect(await sluice('sets', 'run-now', 'six-hourly-compaction', '--id', 'cli-1')).toBe(0);
    expect(last()).toBe('six-hourly-compaction: run now-cli-1, 1 jobs enqueued');
    expect(await sluice('sets', 'run-now', 'six-hourly-compaction', '--id', 'cli-1')).toBe(0);
    expect(last()).toContain('sent again');
    await waitFor('the run completed', async () => completed.some((e) => e.detail.run === 'now-cli-1'), 30_000);
    expect(await sluice('sets', 'runs', 'six-hourly-compaction')).toBe(0);
    expect(last()).toMatch(/^now-cli-1 {2}started .* completed in \d+ s: 1 succeeded, 0 failed of 1$/);
    expect(await sluice('sets', 'pause', 'six-hourly-compaction')).toBe(0);
    expect(await sluice('sets', 'list')).toBe(0);
    expect(last()).toContain('six-hourly-compaction  rate(6 hours) UTC  1 jobs  PAUSED  last run: now-cli-1');
    expect(last()).toContain('daily-flows  cron(0 2 * * ? *) Europe/Paris  120 jobs');
    // a paused set's scheduled fire is skipped
    expect(await stack.fireJobSet('six-hourly-compaction', '2026-11-27T06:00:00Z')).toMatchObject({ result: 'paused' });
    expect(await sluice('sets', 'resume', 'six-hourly-compaction')).toBe(0);
    expect(await stack.fireJobSet('six-hourly-compaction', '2026-11-27T06:00:00Z')).toMatchObject({ result: 'enqueued' });
    expect(await sluice('sets', 'run-now', 'nope')).toBe(1);
    expect(last()).toContain("no job set 'nope'");
  }, 60_000);
});
