import { randomBytes, randomUUID } from 'node:crypto';
import type { Context } from 'aws-lambda';

export interface LambdaContextOptions {
  functionName: string;
  /** The function's timeout: getRemainingTimeInMillis counts down from it. */
  timeoutMs: number;
  memoryLimitInMB?: number;
  region: string;
  accountId: string;
  now?: () => number;
}

/** A Lambda context for one invocation, with what Powertools Logger and typical handlers read. */
export function createLambdaContext(options: LambdaContextOptions): Context {
  const now = options.now ?? Date.now;
  const deadline = now() + options.timeoutMs;
  const day = new Date(now()).toISOString().slice(0, 10).replaceAll('-', '/');
  const unsupported = (name: string) => () => {
    throw new Error(`context.${name}() is the Node 0.10 callback API; return or throw from the handler instead`);
  };
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName: options.functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:${options.region}:${options.accountId}:function:${options.functionName}`,
    memoryLimitInMB: String(options.memoryLimitInMB ?? 128),
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${options.functionName}`,
    logStreamName: `${day}/[$LATEST]${randomBytes(16).toString('hex')}`,
    getRemainingTimeInMillis: () => Math.max(0, deadline - now()),
    done: unsupported('done'),
    fail: unsupported('fail'),
    succeed: unsupported('succeed'),
  };
}
