import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { ConfigurationError } from '../../../errors';
import type { TokenKeys } from '../secret';

/**
 * The staging labels of a secret's versions: GetSecretValue with no VersionStage reads AWSCURRENT; a rotation moves
 * AWSCURRENT to the new version and AWSPREVIOUS to the one it left. A secret never rotated has no AWSPREVIOUS version:
 * GetSecretValue answers ResourceNotFoundException for that label.
 * https://docs.aws.amazon.com/secretsmanager/latest/apireference/API_GetSecretValue.html
 * https://docs.aws.amazon.com/secretsmanager/latest/userguide/rotating-secrets.html
 */
export const AWSCURRENT = 'AWSCURRENT';
export const AWSPREVIOUS = 'AWSPREVIOUS';

/**
 * The token keys: the secret's current version, then its previous one (none before its first rotation). The current one
 * first, so that its error (a missing secret, throttling) is what a failed read reports; any error of the previous
 * one but its absence fails the read too (the keyring keeps the keys it had).
 */
export async function readTokenKeys(secretId: string): Promise<TokenKeys> {
  const client = new SecretsManagerClient({});
  try {
    const read = async (VersionStage: string) => {
      const { SecretString } = await client.send(new GetSecretValueCommand({ SecretId: secretId, VersionStage }));
      if (!SecretString) throw new ConfigurationError(`secret ${secretId} has no string value (${VersionStage})`);
      return SecretString;
    };
    const current = await read(AWSCURRENT);
    const previous = await read(AWSPREVIOUS).catch((error: unknown) => {
      if ((error as { name?: unknown } | null)?.name === 'ResourceNotFoundException') return undefined;
      throw error;
    });
    return previous === undefined || previous === current ? { current } : { current, previous };
  } finally {
    client.destroy();
  }
}
