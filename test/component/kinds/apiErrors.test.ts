import path from 'node:path';
import { JobApiError, PermanentStartError, TransientStartError } from '../../../shared/errors';
import { type AnyOperationErrors, CallRole, fullTable, ReadTake, StartTake, StopResult, StopTake } from '../../../shared/kinds/apiErrors';
import { CreateSecretCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { forgetTokenKeys, TOKEN_SECRET_ARN_ENV } from '../../../shared/kinds/callback/secret';
import { ALLOWED_TARGET_ENV } from '../../../shared/kinds/callback/targets';
import type { KindConformance } from '../../../shared/kinds/kindConformance';
import { type JobKind, KINDS, type JobSpec } from '../../../shared/kinds/registry';
import { STARTER_LOADERS } from '../../../shared/kinds/starterLoaders';
import { type FaultPatch, type JobApiSimulator, startJobApiSimulator } from '../../../local/simulators';
import { jobIdOfRun } from '../../../local/simulators/simulatedKinds';
import { type JobStarter, RunStatus } from '../../../shared/ports/jobStarter';

/**
 * Every error of every kind's error tables (shared/kinds/<kind>/apiErrors.ts: the operation's own and the common ones,
 * and each message case), answered by the simulator in the service's own shape and HTTP status (a fault of
 * KindFaults.failCalls), read by the real SDK client and the real starter, and taken as its table says:
 * - a start: refused (TransientStartError, definite), uncertain (not definite) or permanent (PermanentStartError),
 *   and no run started;
 * - a lookup (start told a run may exist): transient (TransientStartError, not definite), permanent, or gone (no earlier
 *   run: the start goes on and starts one);
 * - a status: gone (RunStatus.Gone), or JobApiError transient / permanent;
 * - a stop: already ended (StopResult.AlreadyEnded), or JobApiError transient / permanent.
 * One simulator, no sleeps: each case is one or two calls.
 */

let sim: JobApiSimulator;
const starters = new Map<string, JobStarter>();

beforeAll(async () => {
  sim = await startJobApiSimulator({ durationMs: (_kind, name) => (name.startsWith('slow') ? 600_000 : 50) });
  Object.assign(process.env, { AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'errors', AWS_SECRET_ACCESS_KEY: 'errors' });
  for (const service of ['appflow', 'glue', 'sfn', 'ecs', 'batch', 'lambda', 'eventbridge', 'sqs', 'secrets_manager'])
    process.env[`AWS_ENDPOINT_URL_${service.toUpperCase()}`] = sim.endpoint;
  // Every callback target allowed; the token secret read from Secrets Manager (the simulator), not given directly.
  const secrets = new SecretsManagerClient({});
  const { ARN: SECRET_ARN } = await secrets.send(new CreateSecretCommand({ Name: 'sluice-test-callback-token', SecretString: 'k1' }));
  secrets.destroy();
  Object.assign(process.env, {
    [ALLOWED_TARGET_ENV.lambda]: '*',
    [ALLOWED_TARGET_ENV.sqs]: '*',
    [ALLOWED_TARGET_ENV.eventBus]: '*',
    [TOKEN_SECRET_ARN_ENV]: SECRET_ARN,
  });
  delete process.env.CALLBACK_TOKEN_SECRET;
  for (const kind of KINDS) starters.set(kind.kind, await STARTER_LOADERS[kind.kind]({ warn: () => undefined }));
});
afterAll(() => sim?.close());
afterEach(() => sim.clearFaults());

const conformanceOf = (kind: string): KindConformance =>
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  (require(path.resolve(__dirname, '../../../shared/kinds', kind, 'conformance')) as { conformance: KindConformance }).conformance;

let counter = 0;
const unique = (prefix: string) => `${prefix}-${process.pid}-${++counter}`;

/** The callback channel an operation belongs to (its job's target). */
const CALLBACK_TARGET: Record<string, (name: string) => unknown> = {
  Invoke: (name) => ({ lambda: name }),
  SendMessage: (name) => ({ sqs: `https://sqs.us-east-1.amazonaws.com/123456789012/${name}` }),
  PutEvents: (name) => ({ eventBus: name }),
  GetSecretValue: (name) => ({ lambda: name }),
};

function jobFor(kind: JobKind, op: AnyOperationErrors, name: string): JobSpec {
  const definition = KINDS.find((k) => k.kind === kind)!;
  const spec = conformanceOf(kind).spec(unique('job'), name) as Record<string, unknown>;
  if (kind === 'callback') spec.target = CALLBACK_TARGET[op.operation]!(name);
  return definition.schema.parse(spec) as JobSpec;
}

/** What the starter made of the error, in the table's words. */
function taken(error: unknown): string {
  if (error instanceof TransientStartError) return error.definite ? StartTake.Refused : StartTake.Uncertain;
  if (error instanceof PermanentStartError) return StartTake.Permanent;
  if (error instanceof JobApiError) return error.take;
  return `not a Sluice error: ${String(error)}`;
}

const settle = <T>(p: Promise<T>) =>
  p.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );

interface Case {
  kind: JobKind;
  op: AnyOperationErrors;
  name: string;
  message: string;
  take: string;
  handled: boolean;
}

const cases: Array<[string, Case]> = KINDS.flatMap((kind) =>
  kind.apiErrors.flatMap((op) =>
    Object.entries(fullTable(op)).flatMap(([name, entry]) => [
      [
        `${kind.kind} ${op.operation} (${op.role}) ${name} -> ${entry.take}`,
        { kind: kind.kind, op, name, message: `Simulated ${name}`, take: entry.take, handled: entry.handled !== undefined },
      ] as [string, Case],
      ...(entry.byMessage ?? []).map(
        (c) =>
          [
            `${kind.kind} ${op.operation} (${op.role}) ${name} "${c.example}" -> ${c.take}`,
            { kind: kind.kind, op, name, message: c.example, take: c.take, handled: false },
          ] as [string, Case],
      ),
    ]),
  ),
);

/** Answers the next `count` calls of the case's operation with its error. */
const fail = (c: Case, count = 1) =>
  sim.setFaults({ [c.kind]: { failCalls: { [c.op.operation]: { count, error: c.name, message: c.message } } } } as FaultPatch);

test('the cases cover every table of every kind', () => {
  const covered = new Set(cases.map(([, c]) => `${c.kind} ${c.op.operation} ${c.op.role}`));
  expect(covered.size).toBe(KINDS.reduce((n, k) => n + k.apiErrors.length, 0));
  expect(cases.length).toBeGreaterThan(500);
});

test.each(cases)('%s', async (_title, c) => {
  const starter = starters.get(c.kind)!;
  // A run name per case: a state machine's type is asked once per name (DescribeStateMachine), so each case asks anew.
  const runName = unique(c.op.role === CallRole.Start || c.op.role === CallRole.Lookup ? 'err' : 'slow');
  const spec = jobFor(c.kind, c.op, runName);
  const runsOfJob = () => sim.runs().filter((r) => r.kind === c.kind && jobIdOfRun(r) === spec.id);

  switch (c.op.role) {
    case CallRole.Start: {
      forgetTokenKeys();
      // The token secret is read with the SDK's own retries (3 attempts): its faults outlast them.
      fail(c, c.op.operation === 'GetSecretValue' ? 3 : 1);
      const result = await settle(starter.start(spec));
      expect(taken('error' in result ? result.error : result)).toBe(c.take);
      if (!c.handled) expect((result as { error: TransientStartError }).error.code).toBe(c.name);
      // Nothing started, whatever the take: the call was answered before the service did anything.
      expect(runsOfJob()).toEqual([]);
      return;
    }
    case CallRole.Lookup: {
      fail(c);
      const result = await settle(starter.start(spec, { mayHaveStarted: true, requestedSince: Date.now() }));
      if (c.take === ReadTake.Gone) {
        // The API says the job does not exist: no earlier run either, so the start goes on.
        expect(result).toEqual({ value: { executionId: expect.any(String) } });
        expect(runsOfJob()).toHaveLength(1);
        return;
      }
      const expected = c.take === ReadTake.Transient ? StartTake.Uncertain : StartTake.Permanent;
      expect(taken((result as { error: unknown }).error)).toBe(expected);
      expect((result as { error: TransientStartError }).error.code).toBe(c.name);
      expect(runsOfJob()).toEqual([]);
      return;
    }
    case CallRole.Status: {
      const { executionId } = await starter.start(spec);
      fail(c);
      const result = await settle(starter.status(spec, executionId, { requestedSince: Date.now() - 60_000 }));
      if (c.take === ReadTake.Gone) expect(result).toEqual({ value: RunStatus.Gone });
      else {
        expect(taken((result as { error: unknown }).error)).toBe(c.take);
        expect((result as { error: JobApiError }).error.code).toBe(c.name);
      }
      // The fault was the call's, not the run's: asked again, the run is still there.
      await expect(starter.status(spec, executionId, { requestedSince: Date.now() - 60_000 })).resolves.toBe(RunStatus.InProgress);
      return;
    }
    case CallRole.Stop: {
      const { executionId } = await starter.start(spec);
      fail(c);
      const result = await settle(starter.stop(spec, executionId));
      if (c.take === StopTake.AlreadyEnded) expect(result).toEqual({ value: StopResult.AlreadyEnded });
      else {
        expect(taken((result as { error: unknown }).error)).toBe(c.take);
        expect((result as { error: JobApiError }).error.code).toBe(c.name);
      }
      await expect(starter.stop(spec, executionId)).resolves.toBe(StopResult.Stopped);
      return;
    }
  }
});
