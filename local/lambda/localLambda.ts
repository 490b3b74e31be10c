import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { Context } from 'aws-lambda';
import { resolveValue, type ResourceRefs } from '../infra/provision';
import type { ServiceDefinition } from '../infra/serviceDefinition';
import { createLambdaContext } from '../poller/lambdaContext';
import { AsyncInvoker } from './asyncInvoker';
import { asyncInvokeConfig, type InvocationRecord } from './asyncRules';
import { fenceAbandonedInvocations } from './invocation';
import { enforcedTimeoutMs } from './timeouts';

export interface LocalLambdaOptions {
  definition: ServiceDefinition;
  refs: ResourceRefs;
  region: string;
  accountId: string;
  /** serverless.yml custom.local.timeScale: retry delays and event ages are compressed by it */
  timeScale: number;
  /** Runs a function's handler once (the stack's: in this thread or a worker). */
  dispatch: (functionName: string, event: unknown, context: Context) => Promise<unknown>;
  /** The stage's start grace (START_GRACE_SECONDS): functions that claim starts are held to it (timeouts.ts). */
  startGraceSeconds?: number;
}

export const localFunctionName = (name: string) => `sluice-local-${name}`;

/**
 * The local Lambda service's asynchronous side for the stack: one AsyncInvoker over serverless.yml's functions, each
 * with its `timeout`, `maximumRetryAttempts`, `maximumEventAge` and `destinations.onFailure` (an SQS queue of the stack:
 * the invocation record is sent there, by the Lambda service's own client, not the functions').
 */
export function startLocalLambda(options: LocalLambdaOptions): { invoker: AsyncInvoker; close(): Promise<void> } {
  const { definition, refs } = options;
  const sqs = new SQSClient({ useQueueUrlAsEndpoint: false });
  const functions = Object.fromEntries(
    Object.entries(definition.functions).map(([name, fn]) => [
      name,
      {
        config: asyncInvokeConfig(name, fn),
        timeoutMs: enforcedTimeoutMs(fn, options.startGraceSeconds),
        functionArn: `arn:aws:lambda:${options.region}:${options.accountId}:function:${localFunctionName(name)}`,
      },
    ]),
  );
  const invoker = new AsyncInvoker({
    functions,
    dispatch: options.dispatch,
    context: (name, timeoutMs) =>
      createLambdaContext({ functionName: localFunctionName(name), timeoutMs, region: options.region, accountId: options.accountId }),
    timeScale: options.timeScale,
    sendToDestination: async (destination, record) => {
      const url = queueUrlOf(destination, refs);
      await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: JSON.stringify(record satisfies InvocationRecord) }));
    },
  });
  return {
    invoker,
    async close() {
      await invoker.close();
      sqs.destroy();
    },
  };
}

/** The stack's queue an on-failure destination names (`{ type: sqs, arn }` or an ARN; a GetAtt resolved locally). */
function queueUrlOf(destination: unknown, refs: ResourceRefs): string {
  const arn = resolveValue(
    typeof destination === 'object' && destination !== null && 'arn' in destination ? destination.arn : destination,
    refs,
  );
  const id = Object.keys(refs.arn).find((logicalId) => refs.arn[logicalId] === arn);
  if (!id || !arn.startsWith('arn:aws:sqs:'))
    throw new Error(`the local stack sends on-failure records only to its own queues, not to ${arn}`);
  return refs.ref[id]!;
}

/** Every AWS client of the functions in this thread refuses the calls of an abandoned invocation. */
export function fenceClients(
  clients: { sqs: unknown; dynamodb: unknown },
  onJobApiClient: (listener: (service: string, client: unknown) => void) => void,
): void {
  fenceAbandonedInvocations(clients.sqs);
  fenceAbandonedInvocations(clients.dynamodb); // the document client shares its middleware stack
  onJobApiClient((_service, client) => fenceAbandonedInvocations(client));
}
