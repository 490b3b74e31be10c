import type { LocalStack } from '../../local/stack';
import { deadLettered, expectEveryJobRanOnce, runsOf } from '../support/invariants';
import { startPoolStack } from '../support/poolStack';
import { enqueue, jobState } from '../support/testStack';
import { waitFor } from '../support/waitFor';
import { POOL, EVIL_GLUE, EVIL_ECS, PLAIN_GLUE } from './setup/overrideAttacks';

/**
 * Whoever can write to the queue writes the spec, so what a job may change of what its kind runs is the stage's
 * decision, deny by default. On the whole local stack: a Glue job whose arguments replace its script, and an ECS task
 * run under an admin role with a shell command, are dead-lettered with the setting that would allow them and never
 * start; with a stage that allows exactly those overrides, they run.
 */
describe("the local stage's policy (data, not code or identity: no command, no role, no Glue parameter of Glue's own)", () => {
  let stack: LocalStack;
  beforeAll(async () => {
    stack = await startPoolStack({ [POOL]: 2 }, { defaultRunMs: 100 });
  }, 60_000);
  afterAll(() => stack?.stop());

  test('a script swapped in by its arguments and a task under an admin role are dead-lettered, naming the setting, and never run', async () => {
    await enqueue(stack, [EVIL_GLUE, EVIL_ECS, PLAIN_GLUE]);
    // Refused as it is parsed, like any bad input: no record is written, only its DLQ copy.
    const dead = new Map<string, string>();
    await waitFor(
      'both refused jobs in the DLQ',
      async () => {
        for (const { jobId, reason } of await deadLettered(stack, ['evil-glue', 'evil-ecs'])) dead.set(jobId, reason);
        return dead.size === 2;
      },
      60_000,
    );
    expect(await jobState(stack, 'evil-glue')).toBeUndefined();
    // (The DLQ is read first: the check below reads it too, and what it reads stays hidden for a while.)
    await expectEveryJobRanOnce(stack, { pool: POOL, limit: 2, ids: ['plain-glue'], timeoutMs: 90_000 });
    const reason = (id: string) => dead.get(id);
    expect(reason('evil-glue')).toBe(
      "job refused: override arguments '--scriptLocation' is not allowed on this stage (list '--scriptLocation' in overrides.glue.arguments to allow it)",
    );
    expect(reason('evil-ecs')).toBe(
      'job refused: override overrides.containerOverrides[0].command is not allowed on this stage (set overrides.ecs.command: true to allow it); ' +
        'override overrides.taskRoleArn is not allowed on this stage (set overrides.ecs.taskRole: true to allow it)',
    );
    // Neither ever reached its job API.
    expect(runsOf(stack, ['evil-glue', 'evil-ecs']).size).toBe(0);
  }, 180_000);
});
