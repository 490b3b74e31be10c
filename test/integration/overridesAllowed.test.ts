import type { LocalStack } from '../../local/stack';
import { expectEveryJobRanOnce } from '../support/invariants';
import { startPoolStack } from '../support/poolStack';
import { enqueue } from '../support/testStack';
import { POOL, EVIL_GLUE, EVIL_ECS } from './setup/overrideAttacks';

/**
 * A stage that allows exactly the two attacks' overrides runs them (the local stage refusing them: overrides.test.ts;
 * one stack per file, as the functions' container is one per process).
 */
describe('a stage that allows exactly those overrides', () => {
  let stack: LocalStack;
  beforeAll(async () => {
    const overrides = { glue: { arguments: ['--day', '--scriptLocation'] }, ecs: { command: true, taskRole: true } };
    stack = await startPoolStack({ [POOL]: 2 }, { defaultRunMs: 100, env: { OVERRIDES: JSON.stringify(overrides) } });
  }, 60_000);
  afterAll(() => stack?.stop());

  test('runs them', async () => {
    await enqueue(stack, [EVIL_GLUE, EVIL_ECS]);
    await expectEveryJobRanOnce(stack, { pool: POOL, limit: 2, ids: ['evil-glue', 'evil-ecs'], timeoutMs: 90_000 });
  }, 180_000);
});
