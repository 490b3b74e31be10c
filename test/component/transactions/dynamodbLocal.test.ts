import { startDynamoDbLocal } from '../../support/dynamodbLocal';
import { describeTransactionConformance } from './conformance';

// The reference for the dynalite shim: the official DynamoDB Local jar, in memory.
describeTransactionConformance('DynamoDB Local', () => startDynamoDbLocal({ timeoutMs: 45_000 }), 15_000);
