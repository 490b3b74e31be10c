import { parentPort, workerData } from 'node:worker_threads';
import type { Context } from 'aws-lambda';
import { awsClients, onJobApiClient } from '../../shared/adapters/awsClients';
import type { MiddlewareClient } from '../../bench/tracer';
import { fenceAbandonedInvocations, type InvocationScope, runInvocation } from '../lambda/invocation';
import { createLambdaContext } from '../poller/lambdaContext';
import { type CallMessage, errorShape, type FromWorker, type ToWorker, type WorkerSetup } from './messages';

/**
 * One function worker: a thread of its own running one of Sluice's handlers (the real one from functions/, with its
 * own clients and container, as a Lambda environment has), bundled with this file by esbuild as the deployment
 * bundles it (functionWorkers.ts). Runs the invocations the local stack sends it and reports its AWS calls, which the
 * stack counts as it counts its own.
 */
type Handler = (event: unknown, context: Context) => Promise<unknown>;

const setup = workerData as WorkerSetup;
const post = (message: FromWorker) => parentPort!.postMessage(message);

function reportCalls(client: unknown, service: string): void {
  (client as MiddlewareClient).middlewareStack.add(
    (next, context) => async (args) => {
      const op = (context.commandName ?? 'Unknown').replace(/Command$/, '');
      const t0 = Date.now();
      const p0 = performance.now();
      const call: CallMessage = { type: 'call', service, op, t0, t1: t0, ms: 0, ok: false };
      if (setup.detailedCalls) call.input = (args as { input?: unknown }).input;
      try {
        const result = await next(args);
        call.ok = true;
        if (setup.detailedCalls) call.output = result.output;
        return result;
      } catch (error) {
        if (setup.detailedCalls) call.failure = errorShape(error);
        throw error;
      } finally {
        call.t1 = Date.now();
        call.ms = performance.now() - p0;
        try {
          post(call);
        } catch {
          // an input or output that cannot be cloned: report the call without them
          post({ ...call, input: undefined, output: undefined });
        }
      }
    },
    { step: 'initialize', name: 'sluiceWorkerCalls' },
  );
}

/** The worker's entry (the bundle calls it): `handler` is the function's export. */
export function runWorker(handler: Handler): void {
  const clients = awsClients();
  reportCalls(clients.sqs, 'sqs');
  reportCalls(clients.dynamodb, 'dynamodb');
  onJobApiClient((service, client) => reportCalls(client, service));
  // An invocation past its deadline (its own, or the stack's word) makes no more AWS calls, as on Lambda.
  for (const client of [clients.sqs, clients.dynamodb]) fenceAbandonedInvocations(client);
  onJobApiClient((_service, client) => fenceAbandonedInvocations(client));
  const running = new Map<number, InvocationScope>();

  parentPort!.on('message', (message: ToWorker) => {
    if (message.type === 'abandon') {
      running.get(message.id)?.abandon(message.reason);
      return;
    }
    const context = createLambdaContext({
      functionName: message.context.functionName,
      timeoutMs: message.context.remainingMs,
      region: setup.region,
      accountId: setup.accountId,
      ...(message.context.memoryLimitInMB !== undefined && { memoryLimitInMB: message.context.memoryLimitInMB }),
    });
    runInvocation({
      functionName: message.functionName,
      timeoutMs: message.context.remainingMs,
      onStart: (scope) => running.set(message.id, scope),
      run: () => handler(message.event, context),
    })
      .then((result) => {
        running.delete(message.id); // abandoned already, if it is not done
        post(
          result.ok
            ? { type: 'result', id: message.id, ok: true, value: result.value }
            : { type: 'result', id: message.id, ok: false, error: errorShape(result.error) },
        );
      })
      .catch((error: unknown) => post({ type: 'result', id: message.id, ok: false, error: errorShape(error) }));
  });
  post({ type: 'ready' });
}
