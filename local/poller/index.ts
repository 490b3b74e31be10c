export { startSqsPoller, PollerErrorSource, type SqsPoller, type SqsPollerOptions, type SqsHandler, type PollerStats } from './sqsPoller';
export { settleBatch, BatchOutcome, type BatchSettlement, type HandlerResult } from './batchSettlement';
export { createLambdaContext, type LambdaContextOptions } from './lambdaContext';
export { toSqsRecord, parseQueueArn } from './sqsRecord';
