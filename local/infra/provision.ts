import {
  CreateTableCommand,
  DescribeTableCommand,
  type CreateTableCommandInput,
  type DynamoDBClient,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { CreateQueueCommand, GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { CreateSecretCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { randomBytes } from 'node:crypto';
import type { CfnResource, ServiceDefinition } from './serviceDefinition';

/** What `Ref` and `Fn::GetAtt ... Arn` give for each provisioned resource, by logical id. */
export interface ResourceRefs {
  ref: Record<string, string>;
  arn: Record<string, string>;
}

/** Turns a CloudFormation value (a string, a Ref, a GetAtt Arn) into its local value. */
export function resolveValue(value: unknown, refs: ResourceRefs): string {
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return String(value);
  const v = value as { Ref?: string; 'Fn::GetAtt'?: [string, string] };
  if (v.Ref !== undefined) {
    const resolved = refs.ref[v.Ref];
    if (resolved === undefined) throw new Error(`no local resource for Ref ${v.Ref}`);
    return resolved;
  }
  if (v['Fn::GetAtt']) {
    const [id, attribute] = v['Fn::GetAtt'];
    const resolved = attribute === 'Arn' ? refs.arn[id] : undefined;
    if (resolved === undefined) throw new Error(`no local value for Fn::GetAtt ${id}.${attribute}`);
    return resolved;
  }
  throw new Error(`cannot resolve ${JSON.stringify(value)} locally`);
}

export function resourcesOfType(definition: ServiceDefinition, type: string): Array<[string, CfnResource]> {
  return Object.entries(definition.resources.Resources).filter(([, resource]) => resource.Type === type);
}

/** Queue attributes CloudFormation takes as properties and SQS takes as attributes, by the same names. */
const QUEUE_ATTRIBUTES = [
  'VisibilityTimeout',
  'MessageRetentionPeriod',
  'DelaySeconds',
  'ReceiveMessageWaitTimeSeconds',
  'MaximumMessageSize',
];

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** A random string of letters and digits (GenerateSecretString with ExcludePunctuation). */
function generatedSecret(length: number): string {
  return Array.from(randomBytes(length), (b) => ALPHANUMERIC[b % ALPHANUMERIC.length]).join('');
}

/**
 * Creates the queues, the table and the secrets that serverless.yml defines, against whatever endpoints the clients
 * point at.
 */
export async function provision(
  definition: ServiceDefinition,
  clients: { sqs: SQSClient; dynamodb: DynamoDBClient; secretsManager?: SecretsManagerClient },
  /** Appended to every queue and table name, so several stacks can share one pair of emulators. */
  nameSuffix = '',
): Promise<ResourceRefs> {
  const refs: ResourceRefs = { ref: {}, arn: {} };
  // Queues a redrive policy points at come first.
  const queues = resourcesOfType(definition, 'AWS::SQS::Queue').sort(
    ([, a], [, b]) => Number(!!a.Properties?.RedrivePolicy) - Number(!!b.Properties?.RedrivePolicy),
  );
  for (const [id, resource] of queues) {
    const props = resource.Properties ?? {};
    const Attributes: Record<string, string> = {};
    for (const name of QUEUE_ATTRIBUTES) if (props[name] !== undefined) Attributes[name] = String(props[name]);
    const redrive = props.RedrivePolicy as { deadLetterTargetArn: unknown; maxReceiveCount: unknown } | undefined;
    if (redrive) {
      Attributes.RedrivePolicy = JSON.stringify({
        deadLetterTargetArn: resolveValue(redrive.deadLetterTargetArn, refs),
        maxReceiveCount: Number(redrive.maxReceiveCount),
      });
    }
    const { QueueUrl } = await clients.sqs.send(
      new CreateQueueCommand({ QueueName: `${String(props.QueueName ?? id)}${nameSuffix}`, Attributes }),
    );
    const { Attributes: got } = await clients.sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }));
    refs.ref[id] = QueueUrl!;
    refs.arn[id] = got!.QueueArn!;
  }
  // Secrets in the simulator's Secrets Manager, their value generated as CloudFormation's GenerateSecretString would
  // (letters and digits, PasswordLength long). Without one, a secret's ARN is a stand-in.
  for (const [id, resource] of resourcesOfType(definition, 'AWS::SecretsManager::Secret')) {
    const name = `${String(resource.Properties?.Name ?? id)}${nameSuffix}`;
    if (clients.secretsManager) {
      const generate = resource.Properties?.GenerateSecretString as { PasswordLength?: number } | undefined;
      const SecretString = generatedSecret(Number(generate?.PasswordLength ?? 32));
      const { ARN } = await clients.secretsManager.send(new CreateSecretCommand({ Name: name, SecretString }));
      refs.ref[id] = ARN!;
    } else {
      refs.ref[id] = `arn:aws:secretsmanager:us-east-1:000000000000:secret:${name}`;
    }
    refs.arn[id] = refs.ref[id];
  }
  for (const [id, resource] of resourcesOfType(definition, 'AWS::DynamoDB::Table')) {
    const input = tableInput(resource, `${String(resource.Properties?.TableName ?? id)}${nameSuffix}`);
    // A CreateTable whose answer was lost after the table was made (the fault layer does that, as AWS may) is retried
    // by the SDK and answered ResourceInUseException: taken as made if the table is no older than this call (a
    // table left by an earlier run still fails). CreateTable answers ResourceInUseException for a table that exists:
    // https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_CreateTable.html#API_CreateTable_Errors
    const asked = Date.now();
    await clients.dynamodb.send(new CreateTableCommand(input)).catch(async (error: unknown) => {
      if ((error as { name?: string }).name !== 'ResourceInUseException') throw error;
      const { Table } = await clients.dynamodb.send(new DescribeTableCommand({ TableName: input.TableName }));
      if (!Table?.CreationDateTime || Table.CreationDateTime.getTime() < asked - 2_000) throw error;
    });
    const ttl = resource.Properties?.TimeToLiveSpecification as { AttributeName: string; Enabled: boolean } | undefined;
    if (ttl?.Enabled) {
      // dynalite has no UpdateTimeToLive; DynamoDB Local has. TTL is never relied on for timing either way.
      await clients.dynamodb
        .send(new UpdateTimeToLiveCommand({ TableName: input.TableName, TimeToLiveSpecification: ttl }))
        .catch(() => undefined);
    }
    refs.ref[id] = input.TableName!;
    refs.arn[id] = `arn:aws:dynamodb:us-east-1:000000000000:table/${input.TableName}`;
  }
  return refs;
}

/** The CreateTable input for a table resource (the key schema and billing as deployed). */
export function tableInput(resource: CfnResource, tableName?: string): CreateTableCommandInput {
  const props = resource.Properties ?? {};
  return {
    TableName: tableName ?? String(props.TableName),
    AttributeDefinitions: props.AttributeDefinitions as CreateTableCommandInput['AttributeDefinitions'],
    KeySchema: props.KeySchema as CreateTableCommandInput['KeySchema'],
    GlobalSecondaryIndexes: props.GlobalSecondaryIndexes as CreateTableCommandInput['GlobalSecondaryIndexes'],
    BillingMode: (props.BillingMode as CreateTableCommandInput['BillingMode']) ?? 'PAY_PER_REQUEST',
  };
}

/** The environment a function gets: the provider's, then its own, with resource references resolved. */
export function functionEnvironment(definition: ServiceDefinition, functionName: string, refs: ResourceRefs): Record<string, string> {
  const merged = { ...definition.provider.environment, ...definition.functions[functionName]?.environment };
  return Object.fromEntries(Object.entries(merged).map(([key, value]) => [key, resolveValue(value, refs)]));
}
