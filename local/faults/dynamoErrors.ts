/*
 * Every error the DynamoDB operations Sluice calls can return, as the SDK client's own commands declare them (`@throws`
 * in @aws-sdk/client-dynamodb's commands: test/unit/local/dynamoErrors.test.ts fails when one is missing here, or when
 * a name here is not an error class of the SDK), with what it means for the caller and whether the fault layer
 * (dynamoFaults.ts) answers with it. The API reference lists them per operation, e.g.
 * https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_UpdateItem.html#API_UpdateItem_Errors and
 * https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/CommonErrors.html; how the SDK retries them:
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Programming.Errors.html#Programming.Errors.RetryAndBackoff
 */

/** The operations Sluice sends (adapters, inspect, CLI, bench). */
export const DYNAMODB_OPERATIONS = [
  'GetItem',
  'PutItem',
  'UpdateItem',
  'DeleteItem',
  'Query',
  'Scan',
  'TransactWriteItems',
  'BatchWriteItem',
] as const;
export type DynamoOperation = (typeof DYNAMODB_OPERATIONS)[number];

export const DynamoErrorClass = {
  /** refused, nothing written; the SDK retries it itself (throttling, server errors), with backoff */
  RetriedBySdk: 'retried-by-sdk',
  /** refused, nothing written; the SDK does not retry it: the caller must (contention on a hot item) */
  CallerRetries: 'caller-retries',
  /** the answer of the request's own condition: an outcome, which the fault layer never fakes */
  Outcome: 'outcome',
  /** a deployment mistake (the table missing): every call fails until it is fixed; not injected */
  Misconfiguration: 'misconfiguration',
  /** cannot happen with Sluice's table and requests (the reason says why); not injected */
  NotApplicable: 'not-applicable',
} as const;
export type DynamoErrorClass = (typeof DynamoErrorClass)[keyof typeof DynamoErrorClass];

export interface DynamoErrorFact {
  /** HTTP status DynamoDB answers it with */
  status: number;
  class: DynamoErrorClass;
  /** the request may have been applied although this came back (only a server error) */
  mayHaveApplied: boolean;
  why: string;
}

export const DYNAMODB_ERRORS = {
  ConditionalCheckFailedException: {
    status: 400,
    class: DynamoErrorClass.Outcome,
    mayHaveApplied: false,
    why: 'the condition did not hold on the item as stored: a lost race, read as such by every adapter',
  },
  InternalServerError: {
    status: 500,
    class: DynamoErrorClass.RetriedBySdk,
    mayHaveApplied: true,
    why: 'a server fault: the write may or may not have been applied, and the SDK sends it again (a retried write may meet its own effect)',
  },
  InvalidEndpointException: {
    status: 421,
    class: DynamoErrorClass.NotApplicable,
    mayHaveApplied: false,
    why: 'only with endpoint discovery, which the clients leave off',
  },
  ItemCollectionSizeLimitExceededException: {
    status: 400,
    class: DynamoErrorClass.NotApplicable,
    mayHaveApplied: false,
    why: 'only for tables with a local secondary index: the Sluice table has none',
  },
  ProvisionedThroughputExceededException: {
    status: 400,
    class: DynamoErrorClass.RetriedBySdk,
    mayHaveApplied: false,
    why: 'the request rate is too high for the table or a partition (a hot item among them)',
  },
  ReplicatedWriteConflictException: {
    status: 400,
    class: DynamoErrorClass.NotApplicable,
    mayHaveApplied: false,
    why: 'only on multi-Region strongly consistent global tables: the Sluice table is in one Region',
  },
  RequestLimitExceeded: {
    status: 400,
    class: DynamoErrorClass.RetriedBySdk,
    mayHaveApplied: false,
    why: "the account's throughput quota is exceeded",
  },
  ResourceNotFoundException: {
    status: 400,
    class: DynamoErrorClass.Misconfiguration,
    mayHaveApplied: false,
    why: 'the table (or index) does not exist or is not ACTIVE: a deployment mistake',
  },
  ThrottlingException: {
    status: 400,
    class: DynamoErrorClass.RetriedBySdk,
    mayHaveApplied: false,
    why: 'the request was throttled (on-demand scaling, control-plane rate)',
  },
  TransactionConflictException: {
    status: 400,
    class: DynamoErrorClass.CallerRetries,
    mayHaveApplied: false,
    why: 'a single-item write to an item an ongoing transaction holds: rejected, and the SDK does not retry it',
  },
  TransactionCanceledException: {
    status: 400,
    class: DynamoErrorClass.CallerRetries,
    mayHaveApplied: false,
    why: 'nothing applied; per item, a failed condition (an outcome) or contention (TransactionConflict, ThrottlingError, ProvisionedThroughputExceeded: try again)',
  },
  TransactionInProgressException: {
    status: 400,
    class: DynamoErrorClass.RetriedBySdk,
    mayHaveApplied: true,
    why: 'a retry of a transaction (same ClientRequestToken) while the first attempt is still in progress: the SDK retries until that one is done',
  },
  IdempotentParameterMismatchException: {
    status: 400,
    class: DynamoErrorClass.NotApplicable,
    mayHaveApplied: false,
    why: 'a ClientRequestToken reused with another payload: the SDK makes a token per call and keeps it only across its own retries',
  },
} as const satisfies Record<string, DynamoErrorFact>;
export type DynamoErrorName = keyof typeof DYNAMODB_ERRORS;

/**
 * The reasons a TransactionCanceledException gives per item
 * (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html#API_TransactWriteItems_Errors).
 */
export const CANCELLATION_REASON_CODES = {
  None: 'this item was fine',
  ConditionalCheckFailed: "the item's condition did not hold (an outcome)",
  TransactionConflict: 'another transaction is ongoing on the item (contention: try again)',
  ThrottlingError: 'too little capacity right now, the table scaling (contention: try again)',
  ProvisionedThroughputExceeded: 'provisioned throughput exceeded (contention: try again)',
  ItemCollectionSizeLimitExceeded: 'not applicable: the table has no local secondary index',
  ValidationError: 'a request Sluice never makes (an item over 400 KB, a bad value): a bug, not a fault to inject',
} as const;
