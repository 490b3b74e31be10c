import { PermanentStartError } from '../../../shared/errors';
import { sfn } from '../../../shared/kinds/sfn';
import { executionNameOf } from '../../../shared/kinds/sfn/spec';
import { type JobApiSimulator, startJobApiSimulator } from '../../../local/simulators';
import type { JobStarter } from '../../../shared/ports/jobStarter';
import type { JobSpec } from '../../../shared/kinds/registry';
import { STARTER_LOADERS } from '../../../shared/kinds/starterLoaders';

/** What Step Functions adds to the conformance suite: express machines, execution names, a changed input. */

let sim: JobApiSimulator;
let starter: JobStarter;
beforeAll(async () => {
  sim = await startJobApiSimulator({ durationMs: 60_000 });
  Object.assign(process.env, {
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'sfn',
    AWS_SECRET_ACCESS_KEY: 'sfn',
    AWS_ENDPOINT_URL_SFN: sim.endpoint,
  });
  starter = await STARTER_LOADERS.sfn({ warn: () => undefined });
});
afterAll(() => sim?.close());

const job = (id: string, machine: string, input: unknown = { day: 1 }): JobSpec =>
  sfn.schema.parse({ kind: 'sfn', id, stateMachineArn: `arn:aws:states:us-east-1:123456789012:stateMachine:${machine}`, input }) as JobSpec;

test('an EXPRESS state machine is refused before anything starts', async () => {
  const error = await starter.start(job('x-1', 'express-orders')).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(PermanentStartError);
  expect((error as PermanentStartError).code).toBe('ExpressWorkflow');
  expect(sim.startCalls()).toEqual([]);
});

test('the execution is named after the job id; an id that is no valid name gets a hash, and starts once all the same', async () => {
  const plain = await starter.start(job('order-7', 'sluice-etl'));
  expect(plain.executionId).toBe('arn:aws:states:us-east-1:123456789012:execution:sluice-etl:sluice-order-7');
  const odd = job('org:acme:order-7', 'sluice-etl');
  const first = await starter.start(odd);
  expect(first.executionId).toMatch(/:execution:sluice-etl:sluiceh-[0-9a-f]{40}$/);
  expect((await starter.start(odd, { mayHaveStarted: true })).executionId).toBe(first.executionId);
  expect(sim.runs().filter((r) => r.executionId === first.executionId)).toHaveLength(1);
});

test('a start of the same job with another input finds the first execution instead of starting a second', async () => {
  const first = await starter.start(job('order-8', 'sluice-etl', { day: 1 }));
  const again = await starter.start(job('order-8', 'sluice-etl', { day: 2 }), { mayHaveStarted: true });
  expect(again.executionId).toBe(first.executionId);
  expect(sim.runs().filter((r) => r.clientToken === 'sluice-order-8')).toHaveLength(1);
});

test('execution names stay within Step Functions rules for every id Sluice accepts', () => {
  for (const id of ['a', 'A.b_c-d', 'x'.repeat(73), 'x'.repeat(74), 'org:acme', 'y'.repeat(128)]) {
    const name = executionNameOf(id);
    expect(name).toMatch(/^sluice[a-zA-Z0-9._-]{1,74}$/);
    expect(name.length).toBeLessThanOrEqual(80);
  }
  expect(executionNameOf('org:acme')).not.toBe(executionNameOf('org:acme2'));
});
