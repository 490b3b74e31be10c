import { UsageError } from '../../../shared/cli/args';
import { resolveTargets, stageResourceNames } from '../../../shared/cli/targets';

const noLookup = async (name: string): Promise<string> => {
  throw new Error(`unexpected GetQueueUrl ${name}`);
};

describe('resolveTargets', () => {
  test('flags win over the environment, which wins over the stage', async () => {
    const env = { SLUICE_TABLE: 'env-table', SLUICE_QUEUE_URL: 'https://env/q', SLUICE_STAGE: 'prod' };
    const targets = await resolveTargets({ json: false, table: 'flag-table' }, env, ['table', 'queueUrl'], noLookup);
    expect(targets).toMatchObject({ table: 'flag-table', queueUrl: 'https://env/q' });
  });

  test('a stage gives the table name and looks up only the queues asked for, by name', async () => {
    const looked: string[] = [];
    const lookup = async (name: string) => {
      looked.push(name);
      return `https://sqs/${name}`;
    };
    const targets = await resolveTargets({ json: false, stage: 'prod' }, {}, ['table', 'queueUrl'], lookup);
    expect(targets).toEqual({ table: 'sluice-prod', queueUrl: 'https://sqs/sluice-prod-jobs', dlqUrl: undefined });
    expect(looked).toEqual(['sluice-prod-jobs']);
  });

  test('SLUICE_STAGE works like --stage; --stage wins', async () => {
    const lookup = async (name: string) => `https://sqs/${name}`;
    expect((await resolveTargets({ json: false }, { SLUICE_STAGE: 'qa' }, ['dlqUrl'], lookup)).dlqUrl).toBe('https://sqs/sluice-qa-dlq');
    expect((await resolveTargets({ json: false, stage: 'dev' }, { SLUICE_STAGE: 'qa' }, ['table'], lookup)).table).toBe('sluice-dev');
  });

  test('pool list needs only the table: no queue lookup', async () => {
    expect(await resolveTargets({ json: false, stage: 'dev' }, {}, ['table'], noLookup)).toEqual({
      table: 'sluice-dev',
      queueUrl: undefined,
      dlqUrl: undefined,
    });
  });

  test('nothing to go on is a usage error naming the flag, the variable and --stage', async () => {
    await expect(resolveTargets({ json: false }, { SLUICE_TABLE: '  ' }, ['table'], noLookup)).rejects.toThrow(UsageError);
    await expect(resolveTargets({ json: false }, {}, ['queueUrl'], noLookup)).rejects.toThrow(
      'give --queue-url URL (or SLUICE_QUEUE_URL), or --stage STAGE',
    );
  });

  test('stage names are the ones serverless.yml gives (checked against the template in test/component/package)', () => {
    expect(stageResourceNames('dev')).toEqual({
      table: 'sluice-dev',
      queue: 'sluice-dev-jobs',
      deadLetterQueue: 'sluice-dev-dlq',
      callbackQueue: 'sluice-dev-callbacks',
    });
  });
});
