import path from 'node:path';
import { InvalidEventError } from '../../../shared/errors';
import type { KindConformance } from '../../../shared/kinds/kindConformance';
import { isIgnored, type KindDefinition, rulesOf } from '../../../shared/kinds/kindDefinition';
import { type JobKind, KINDS, type JobSpec } from '../../../shared/kinds/registry';
import { STARTER_LOADERS } from '../../../shared/kinds/starterLoaders';
import { matchesPattern } from '../../../local/bus';
import { type JobApiSimulator, startJobApiSimulator } from '../../../local/simulators';
import { jobIdOfRun } from '../../../local/simulators/simulatedKinds';
import { type JobStarter, RunStatus } from '../../../shared/ports/jobStarter';
import { waitFor } from '../../support/waitFor';

/**
 * The kind conformance suite: every registered kind, on its simulator, through its real starter and the real SDK
 * client (endpoints from AWS_ENDPOINT_URL_<SERVICE>, as in Lambda). A new kind passes it before it is done.
 *
 * Simulator names: `slow-*` runs last a minute (they end only when stopped), `fail-*` runs fail, `timeout-*` runs
 * time out, others succeed after 50 ms. Every documented error of every operation is driven through the starters by
 * apiErrors.test.ts.
 */

let sim: JobApiSimulator;
const starters = new Map<string, JobStarter>();
const warnings: string[] = [];

beforeAll(async () => {
  sim = await startJobApiSimulator({
    durationMs: (_kind, name) => (name.startsWith('slow-') ? 60_000 : 50),
    outcome: (_kind, name) => (name.startsWith('fail-') ? 'failed' : name.startsWith('timeout-') ? 'timeout' : 'succeeded'),
  });
  Object.assign(process.env, { AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'conformance', AWS_SECRET_ACCESS_KEY: 'conformance' });
  for (const kind of KINDS) {
    for (const service of [kind.sdkService, ...(kind.moreSdkServices ?? [])])
      process.env[`AWS_ENDPOINT_URL_${service.toUpperCase()}`] = sim.endpoint;
    Object.assign(process.env, conformanceOf(kind.kind).env);
    starters.set(kind.kind, await STARTER_LOADERS[kind.kind]({ warn: (message) => warnings.push(message) }));
  }
});
afterAll(() => sim?.close());
afterEach(() => sim.clearFaults());

const conformanceOf = (kind: string): KindConformance =>
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  (require(path.resolve(__dirname, '../../../shared/kinds', kind, 'conformance')) as { conformance: KindConformance }).conformance;

let counter = 0;
const unique = (prefix: string) => `${prefix}-${process.pid}-${++counter}`;

describe.each(KINDS.map((k) => [k.kind, k as KindDefinition<JobKind>] as const))('%s', (_, kind) => {
  const fixture = conformanceOf(kind.kind);
  const starter = () => starters.get(kind.kind)!;
  const job = (name: string, id = unique('job')): JobSpec => kind.schema.parse(fixture.spec(id, name)) as JobSpec;
  const runsOf = (id: string) => sim.runs().filter((r) => r.kind === kind.kind && jobIdOfRun(r) === id);
  const endEventOf = (executionId: string) =>
    waitFor(`the end event of ${executionId}`, () => sim.emitted().find((e) => e.executionId === executionId), 5_000, 5);

  test('the spec keeps the shared base fields (pool, limits, weight, priority, fairnessKey) and refuses unknown ones', () => {
    const spec = kind.schema.parse({
      ...(fixture.spec('j-1', 'sluice-x') as object),
      limits: ['org:a'],
      weight: 2,
      priority: 1,
      fairnessKey: 't',
    });
    expect(spec).toMatchObject({
      id: 'j-1',
      pool: 'default',
      limits: ['org:a'],
      weight: 2,
      priority: 1,
      fairnessKey: 't',
      kind: kind.kind,
    });
    expect(kind.schema.safeParse({ ...(fixture.spec('j-1', 'sluice-x') as object), surprise: 1 }).success).toBe(false);
    expect(kind.target(spec)).toEqual(expect.any(String));
  });

  test('starting twice for one job id gives one run, while it runs and after it ended', async () => {
    const requestedSince = Date.now();
    const spec = job(`mid-${kind.kind}`);
    const first = await starter().start(spec, { requestedSince });
    const again = await starter().start(spec, { mayHaveStarted: true, requestedSince });
    expect(again.executionId).toBe(first.executionId);
    await endEventOf(first.executionId);
    const afterEnd = await starter().start(spec, { mayHaveStarted: true, requestedSince });
    expect(afterEnd.executionId).toBe(first.executionId);
    expect(runsOf(spec.id).map((r) => r.executionId)).toEqual([first.executionId]);
  });

  test('status maps every state the API documents (queued and intermediate ones included)', async () => {
    expect(Object.keys(fixture.statuses).sort()).toEqual([...fixture.documentedStatuses].sort());
    const spec = job(`slow-${kind.kind}`);
    const { executionId } = await starter().start(spec);
    expect(await starter().status(spec, executionId)).toBe(RunStatus.InProgress);
    const seen: Record<string, string> = {};
    for (const state of Object.keys(fixture.statuses)) {
      expect(sim.setStatus(kind.kind, executionId, state)).toBe(true);
      seen[state] = await starter().status(spec, executionId, { requestedSince: Date.now() - 60_000 });
    }
    expect(seen).toEqual(fixture.statuses);
    await starter().stop(spec, executionId);
  });

  test.each([
    ['succeeded', 'ok', 'succeeded'],
    ['failed', 'fail', 'failed'],
    ['timed out', 'timeout', 'failed'],
  ])(
    'a run that %s (a `%s-` name): its end event matches one rule and is read with its outcome; the status API agrees',
    async (_what, prefix, outcome) => {
      const spec = job(`${prefix}-${kind.kind}`);
      const { executionId } = await starter().start(spec);
      const { event } = await endEventOf(executionId);
      // The rules as the local stage renders them: every flow and job name allowed (the simulator's are not sluice-*).
      const everyName = Object.fromEntries(Object.keys(kind.iam.params).map((name) => [name, '*']));
      expect(rulesOf(kind, everyName).filter((rule) => matchesPattern(rule, event))).toHaveLength(1);
      expect(kind.events.parse(event)).toMatchObject({ kind: kind.kind, executionId, outcome });
      // A kind with no status API keeps a run in progress until its report (or its deadline) ends it.
      expect(await starter().status(spec, executionId)).toBe(fixture.statusApi === false ? RunStatus.InProgress : outcome);
    },
  );

  test('stop ends a run: it is read as failed, from its end event and from the status API', async () => {
    const spec = job(`slow-${kind.kind}`);
    const { executionId } = await starter().start(spec);
    await starter().stop(spec, executionId);
    const { event } = await endEventOf(executionId);
    expect(kind.events.parse(event)).toMatchObject({ executionId, outcome: 'failed' });
    if (fixture.statusApi === false) return;
    await waitFor('the stopped status', async () => (await starter().status(spec, executionId)) === RunStatus.Failed, 5_000, 5);
  });

  test('events that end no run are ignored with a reason; malformed ones are refused', () => {
    for (const [what, event] of fixture.ignoredEvents) {
      const read = kind.events.parse(event);
      expect([what, isIgnored(read) && read.ignored.length > 0]).toEqual([what, true]);
    }
    for (const [what, event] of fixture.malformedEvents) {
      expect([
        what,
        (() => {
          try {
            return kind.events.parse(event);
          } catch (error) {
            return error instanceof InvalidEventError ? 'refused' : error;
          }
        })(),
      ]).toEqual([what, 'refused']);
    }
  });
});
