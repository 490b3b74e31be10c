import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { ConfigurationError } from '../../../errors';

/** The secret's string (GetSecretValue); the stack generates it (serverless.yml, CallbackTokenSecret). */
export async function readSecret(secretId: string): Promise<string> {
  const client = new SecretsManagerClient({});
  try {
    const { SecretString } = await client.send(new GetSecretValueCommand({ SecretId: secretId }));
    if (!SecretString) throw new ConfigurationError(`secret ${secretId} has no string value`);
    return SecretString;
  } finally {
    client.destroy();
  }
}
