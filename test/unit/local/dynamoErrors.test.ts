import fs from 'node:fs';
import path from 'node:path';
import * as dynamodb from '@aws-sdk/client-dynamodb';
import { CANCELLATION_REASON_CODES, DYNAMODB_ERRORS, DYNAMODB_OPERATIONS } from '../../../local/faults/dynamoErrors';

/** The SDK's own list of what a command throws (its `@throws` doc lines), the base class left out. */
function sdkThrows(operation: string): string[] {
  const dir = path.dirname(require.resolve('@aws-sdk/client-dynamodb/package.json'));
  const text = fs.readFileSync(path.join(dir, 'dist-types', 'commands', `${operation}Command.d.ts`), 'utf8');
  return [...new Set([...text.matchAll(/@throws \{@link (\w+)\}/g)].map((m) => m[1]!))].filter(
    (name) => name !== 'DynamoDBServiceException',
  );
}

describe('every error of every DynamoDB operation Sluice calls is in the table', () => {
  test.each(DYNAMODB_OPERATIONS)('%s', (operation) => {
    const missing = sdkThrows(operation).filter((name) => !(name in DYNAMODB_ERRORS));
    expect(missing).toEqual([]);
  });

  test('every name in the table is an error class of the SDK (no typos)', () => {
    const exported = dynamodb as unknown as Record<string, unknown>;
    const unknown = Object.keys(DYNAMODB_ERRORS).filter((name) => typeof exported[name] !== 'function');
    expect(unknown).toEqual([]);
  });

  test('the cancellation reasons are the ones the TransactWriteItems reference lists', () => {
    const dir = path.dirname(require.resolve('@aws-sdk/client-dynamodb/package.json'));
    const text = fs.readFileSync(path.join(dir, 'dist-types', 'commands', 'TransactWriteItemsCommand.d.ts'), 'utf8');
    const codes = [...text.matchAll(/Code: <code>(\w+)<\/code>/g)].map((m) => m[1]!);
    expect(codes.length).toBeGreaterThan(3);
    expect(codes.filter((code) => !(code in CANCELLATION_REASON_CODES))).toEqual([]);
  });
});
