import { type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { CreateTableCommand } from '@aws-sdk/client-dynamodb';
import { loadServiceDefinition } from '../../shared/local/infra/serviceDefinition';
import { resourcesOfType, tableInput } from '../../shared/local/infra/provision';

let counter = 0;

/** Creates a table with exactly the key schema serverless.yml deploys, under a fresh name, and returns the name. */
export async function createSluiceTable(dynamodb: DynamoDBClient, prefix = 'sluice-test'): Promise<string> {
  const definition = await loadServiceDefinition('local');
  const [entry] = resourcesOfType(definition, 'AWS::DynamoDB::Table');
  if (!entry) throw new Error('serverless.yml defines no DynamoDB table');
  const name = `${prefix}-${process.pid}-${Date.now()}-${counter++}`;
  await dynamodb.send(new CreateTableCommand(tableInput(entry[1], name)));
  return name;
}
