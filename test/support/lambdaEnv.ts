import { AppflowClient } from '@aws-sdk/client-appflow';
import { GlueClient } from '@aws-sdk/client-glue';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';

/**
 * The environment serverless.yml gives the functions, with test values. The handlers read it on first use, as in
 * Lambda, so call this before requiring them.
 */
export function setLambdaEnv(overrides: Record<string, string> = {}): void {
  Object.assign(process.env, {
    TABLE_NAME: 'sluice-test',
    QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/sluice-test-jobs',
    DLQ_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/sluice-test-dlq',
    POOLS: '{"default":2}',
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
    ...overrides,
  });
}

/** aws-sdk-client-mock on every client the functions use. */
export function mockAwsClients() {
  return {
    ddb: mockClient(DynamoDBDocumentClient),
    sqs: mockClient(SQSClient),
    appflow: mockClient(AppflowClient),
    glue: mockClient(GlueClient),
  };
}

/** A job record as the ledger stores it in DynamoDB (spec as JSON), for a mocked GetItem of `JOB#<id>`. */
export function ledgerItem(spec: { id: string; pool: string; kind: string }, state: string, extra: Record<string, unknown> = {}) {
  return {
    jobId: spec.id,
    pool: spec.pool,
    kind: spec.kind,
    state,
    spec: JSON.stringify(spec),
    version: 1,
    attempts: 0,
    firstSeenAt: 1,
    updatedAt: 1,
    ...extra,
  };
}
