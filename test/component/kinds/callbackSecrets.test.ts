import { CreateSecretCommand, GetSecretValueCommand, PutSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { readTokenKeys } from '../../../shared/kinds/callback/send/secretReader';
import { type JobApiSimulator, startJobApiSimulator } from '../../../local/simulators';

/**
 * The token key's Secrets Manager as the simulator plays it (shared/kinds/callback/simSecrets.ts), through the
 * real SDK client: versions and staging labels as AWS documents them, and the reader of the token keys on it.
 */

let sim: JobApiSimulator;
let client: SecretsManagerClient;

beforeAll(async () => {
  sim = await startJobApiSimulator({});
  Object.assign(process.env, {
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'secrets',
    AWS_SECRET_ACCESS_KEY: 'secrets',
    AWS_ENDPOINT_URL_SECRETS_MANAGER: sim.endpoint,
  });
  client = new SecretsManagerClient({ maxAttempts: 1 });
});
afterAll(async () => {
  client?.destroy();
  await sim?.close();
});

let counter = 0;
const create = async (value?: string) => {
  const Name = `sluice-test-${++counter}-callback-token`;
  const out = await client.send(new CreateSecretCommand({ Name, ...(value !== undefined && { SecretString: value }) }));
  return { name: Name, arn: out.ARN!, versionId: out.VersionId };
};
const get = (SecretId: string, more: { VersionStage?: string; VersionId?: string } = {}) =>
  client.send(new GetSecretValueCommand({ SecretId, ...more }));
const put = (SecretId: string, SecretString: string, more: { VersionStages?: string[]; ClientRequestToken?: string } = {}) =>
  client.send(new PutSecretValueCommand({ SecretId, SecretString, ...more }));
const failure = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: { name: string; message: string }) => ({ name: e.name, message: e.message }),
  );

test('a new secret: its ARN ends in a random suffix, its value is AWSCURRENT, it has no AWSPREVIOUS yet', async () => {
  const { name, arn, versionId } = await create('k1');
  expect(arn).toMatch(new RegExp(`^arn:aws:secretsmanager:us-east-1:\\d{12}:secret:${name}-[A-Za-z0-9]{6}$`));
  for (const id of [arn, name])
    expect(await get(id)).toMatchObject({ ARN: arn, Name: name, SecretString: 'k1', VersionId: versionId, VersionStages: ['AWSCURRENT'] });
  expect(await failure(get(arn, { VersionStage: 'AWSPREVIOUS' }))).toEqual({
    name: 'ResourceNotFoundException',
    message: "Secrets Manager can't find the specified secret value for staging label: AWSPREVIOUS",
  });
  expect(await readTokenKeys(arn)).toEqual({ current: 'k1' });
});

test('PutSecretValue moves AWSCURRENT to the new version and AWSPREVIOUS to the one it left; the oldest keeps no label', async () => {
  const { arn, versionId: v1 } = await create('k1');
  const second = await put(arn, 'k2');
  expect(second.VersionStages).toEqual(['AWSCURRENT']);
  expect(await get(arn)).toMatchObject({ SecretString: 'k2', VersionId: second.VersionId });
  expect(await get(arn, { VersionStage: 'AWSPREVIOUS' })).toMatchObject({
    SecretString: 'k1',
    VersionId: v1,
    VersionStages: ['AWSPREVIOUS'],
  });
  expect(await readTokenKeys(arn)).toEqual({ current: 'k2', previous: 'k1' });

  const third = await put(arn, 'k3');
  expect(await readTokenKeys(arn)).toEqual({ current: 'k3', previous: 'k2' });
  // The first version lost its last label: deprecated, still readable by its id, by no label.
  expect(await get(arn, { VersionId: v1 })).toMatchObject({ SecretString: 'k1', VersionStages: [] });
  expect(await failure(get(arn, { VersionId: v1, VersionStage: 'AWSCURRENT' }))).toMatchObject({ name: 'ResourceNotFoundException' });
  expect(await get(arn, { VersionId: third.VersionId, VersionStage: 'AWSCURRENT' })).toMatchObject({ SecretString: 'k3' });
});

test('a version put with other labels (a rotation in progress, AWSPENDING) leaves AWSCURRENT where it was', async () => {
  const { arn } = await create('k1');
  await put(arn, 'pending', { VersionStages: ['AWSPENDING'] });
  expect(await readTokenKeys(arn)).toEqual({ current: 'k1' });
  expect(await get(arn, { VersionStage: 'AWSPENDING' })).toMatchObject({ SecretString: 'pending' });
});

test('a ClientRequestToken is the version id: again with the same value it changes nothing, with another it is refused', async () => {
  const { arn } = await create('k1');
  const token = '11111111-2222-3333-4444-555555555555';
  const first = await put(arn, 'k2', { ClientRequestToken: token });
  expect(first.VersionId).toBe(token);
  expect(await put(arn, 'k2', { ClientRequestToken: token })).toMatchObject({ VersionId: token, VersionStages: ['AWSCURRENT'] });
  expect(await readTokenKeys(arn)).toEqual({ current: 'k2', previous: 'k1' });
  expect(await failure(put(arn, 'k3', { ClientRequestToken: token }))).toMatchObject({ name: 'ResourceExistsException' });
});

test('refusals: an unknown secret, a name taken, a secret with no value yet', async () => {
  expect(await failure(get('arn:aws:secretsmanager:us-east-1:000000000000:secret:nothing-AbCdEf'))).toEqual({
    name: 'ResourceNotFoundException',
    message: "Secrets Manager can't find the specified secret.",
  });
  const { name, arn } = await create();
  expect(await failure(client.send(new CreateSecretCommand({ Name: name, SecretString: 'x' })))).toMatchObject({
    name: 'ResourceExistsException',
  });
  expect(await failure(get(arn))).toMatchObject({ name: 'ResourceNotFoundException' });
  await expect(readTokenKeys(arn)).rejects.toMatchObject({ name: 'ResourceNotFoundException' });
  await expect(readTokenKeys(name.replace('callback', 'missing'))).rejects.toMatchObject({ name: 'ResourceNotFoundException' });
});
