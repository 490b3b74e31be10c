import { randomBytes, randomUUID } from 'node:crypto';
import { SimServiceError } from '../../../local/simulators/model';

/**
 * Secrets Manager as Sluice uses it (the callback token key), for the local stack and the tests: secrets with versions
 * and staging labels, as harsh as AWS documents them.
 *
 * - CreateSecret: a secret of that name must not exist (ResourceExistsException); its ARN ends in `-` and six random
 *   characters, so nothing can build it from the name. With a SecretString its first version gets AWSCURRENT.
 *   https://docs.aws.amazon.com/secretsmanager/latest/apireference/API_CreateSecret.html
 * - PutSecretValue: a new version. Without VersionStages it gets AWSCURRENT, and AWSPREVIOUS moves to the version
 *   AWSCURRENT left; with VersionStages it gets exactly those labels, each taken from the version that had it (and when
 *   AWSCURRENT is one, AWSPREVIOUS moves as above). A ClientRequestToken (the SDK makes one) is the version id: sent
 *   again with the same value it changes nothing, with another value it is refused (ResourceExistsException).
 *   https://docs.aws.amazon.com/secretsmanager/latest/apireference/API_PutSecretValue.html
 * - GetSecretValue: the version VersionId or VersionStage names (both: they must name the same one), else AWSCURRENT. A
 *   label no version has (AWSPREVIOUS before the first rotation) or an unknown version id is ResourceNotFoundException,
 *   as is a secret with no value yet; an unknown secret too.
 *   https://docs.aws.amazon.com/secretsmanager/latest/apireference/API_GetSecretValue.html
 * - Staging labels: each is on one version at a time; a version left with none is deprecated (still readable by id).
 *   https://docs.aws.amazon.com/secretsmanager/latest/userguide/whats-in-a-secret.html
 *   https://docs.aws.amazon.com/secretsmanager/latest/userguide/rotating-secrets.html
 *
 * A secret is named by its ARN or its name (a partial ARN is not modelled: it is not found).
 */
export const AWSCURRENT = 'AWSCURRENT';
export const AWSPREVIOUS = 'AWSPREVIOUS';

const NAME = /^[A-Za-z0-9/_+=.@-]{1,512}$/;
const LABEL = /^.{1,256}$/s;
const SUFFIX_CHARS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

interface Version {
  id: string;
  value: string;
  createdAt: number;
}

interface Secret {
  arn: string;
  name: string;
  versions: Map<string, Version>;
  /** staging label -> version id */
  stages: Map<string, string>;
}

const notFound = (message = "Secrets Manager can't find the specified secret.") =>
  new SimServiceError('ResourceNotFoundException', message);
const invalid = (message: string) => new SimServiceError('InvalidParameterException', message);

const text = (value: unknown, field: string): string | undefined => {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw invalid(`${field} must be a string`);
  return value;
};

export class SimulatedSecrets {
  private readonly secrets = new Map<string, Secret>();
  /** GetSecretValue calls answered (the tests count reads). */
  reads = 0;

  constructor(
    private readonly ctx: { region: string; account: string },
    private readonly now: () => number = Date.now,
  ) {}

  create(input: Record<string, unknown>): Record<string, unknown> {
    const name = text(input.Name, 'Name');
    if (!name || !NAME.test(name)) throw invalid('Name must be 1-512 characters of letters, digits and /_+=.@-');
    if (this.secrets.has(name))
      throw new SimServiceError('ResourceExistsException', `The operation failed because the secret ${name} already exists.`);
    const suffix = Array.from(randomBytes(6), (b) => SUFFIX_CHARS[b % SUFFIX_CHARS.length]).join('');
    const secret: Secret = {
      arn: `arn:aws:secretsmanager:${this.ctx.region}:${this.ctx.account}:secret:${name}-${suffix}`,
      name,
      versions: new Map(),
      stages: new Map(),
    };
    const value = text(input.SecretString, 'SecretString');
    this.secrets.set(name, secret);
    if (value === undefined) return { ARN: secret.arn, Name: name };
    const version = this.addVersion(secret, value, text(input.ClientRequestToken, 'ClientRequestToken'), [AWSCURRENT]);
    return { ARN: secret.arn, Name: name, VersionId: version.id };
  }

  put(input: Record<string, unknown>): Record<string, unknown> {
    const secret = this.find(input.SecretId);
    const value = text(input.SecretString, 'SecretString');
    if (value === undefined) throw invalid('You must provide either SecretString or SecretBinary.');
    const stages = input.VersionStages;
    if (
      stages !== undefined &&
      (!Array.isArray(stages) || stages.length === 0 || !stages.every((s) => typeof s === 'string' && LABEL.test(s)))
    )
      throw invalid('VersionStages must be a list of 1 to 20 labels');
    const token = text(input.ClientRequestToken, 'ClientRequestToken');
    const same = token === undefined ? undefined : secret.versions.get(token);
    if (same) {
      // Idempotent: the same token and value is the version already made; another value cannot change a version.
      if (same.value !== value)
        throw new SimServiceError('ResourceExistsException', `A version with ClientRequestToken ${token} already exists with other data.`);
      return { ARN: secret.arn, Name: secret.name, VersionId: same.id, VersionStages: this.labelsOf(secret, same.id) };
    }
    const version = this.addVersion(secret, value, token, (stages as string[] | undefined) ?? [AWSCURRENT]);
    return { ARN: secret.arn, Name: secret.name, VersionId: version.id, VersionStages: this.labelsOf(secret, version.id) };
  }

  get(input: Record<string, unknown>): Record<string, unknown> {
    const secret = this.find(input.SecretId);
    const versionId = text(input.VersionId, 'VersionId');
    const stage = text(input.VersionStage, 'VersionStage');
    let id: string | undefined;
    if (stage !== undefined) {
      id = secret.stages.get(stage);
      if (id === undefined || (versionId !== undefined && versionId !== id))
        throw notFound(`Secrets Manager can't find the specified secret value for staging label: ${stage}`);
    } else if (versionId !== undefined) {
      id = secret.versions.has(versionId) ? versionId : undefined;
      if (id === undefined) throw notFound(`Secrets Manager can't find the specified secret value for VersionId: ${versionId}`);
    } else {
      id = secret.stages.get(AWSCURRENT);
      if (id === undefined) throw notFound(`Secrets Manager can't find the specified secret value for staging label: ${AWSCURRENT}`);
    }
    const version = secret.versions.get(id)!;
    this.reads += 1;
    return {
      ARN: secret.arn,
      Name: secret.name,
      VersionId: version.id,
      SecretString: version.value,
      VersionStages: this.labelsOf(secret, version.id),
      CreatedDate: version.createdAt / 1000,
    };
  }

  private find(secretId: unknown): Secret {
    const id = text(secretId, 'SecretId');
    if (!id) throw invalid('SecretId is required');
    const secret = id.startsWith('arn:') ? [...this.secrets.values()].find((s) => s.arn === id) : this.secrets.get(id);
    if (!secret) throw notFound();
    return secret;
  }

  private addVersion(secret: Secret, value: string, token: string | undefined, labels: readonly string[]): Version {
    const version: Version = { id: token ?? randomUUID(), value, createdAt: this.now() };
    secret.versions.set(version.id, version);
    const left = secret.stages.get(AWSCURRENT);
    for (const label of labels) secret.stages.set(label, version.id);
    // Moving AWSCURRENT moves AWSPREVIOUS to the version it left.
    if (labels.includes(AWSCURRENT) && left !== undefined && left !== version.id) secret.stages.set(AWSPREVIOUS, left);
    return version;
  }

  private labelsOf(secret: Secret, versionId: string): string[] {
    return [...secret.stages].filter(([, id]) => id === versionId).map(([label]) => label);
  }
}
