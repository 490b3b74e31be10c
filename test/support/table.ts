import { type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { CreateTableCommand, DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { loadServiceDefinition } from '../../local/infra/serviceDefinition';
import { resourcesOfType, tableInput } from '../../local/infra/provision';
import { waitFor } from './waitFor';

let counter = 0;

/**
 * Creates a table with exactly the key schema serverless.yml deploys, under a fresh name, and returns the name once the
 * table is ACTIVE: CreateTable answers while the table is still CREATING (on AWS and in dynalite alike), and a write
 * before it is ACTIVE fails with ResourceNotFoundException, more often the busier the machine.
 * https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_CreateTable.html
 */
export async function createSluiceTable(dynamodb: DynamoDBClient, prefix = 'sluice-test'): Promise<string> {
  const definition = await loadServiceDefinition('local');
  const [entry] = resourcesOfType(definition, 'AWS::DynamoDB::Table');
  if (!entry) throw new Error('serverless.yml defines no DynamoDB table');
  const name = `${prefix}-${process.pid}-${Date.now()}-${counter++}`;
  await dynamodb.send(new CreateTableCommand(tableInput(entry[1], name)));
  await waitFor(
    `table ${name} to be ACTIVE`,
    async () => (await dynamodb.send(new DescribeTableCommand({ TableName: name }))).Table?.TableStatus === 'ACTIVE',
    60_000,
    10,
  );
  return name;
}
