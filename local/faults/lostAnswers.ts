/**
 * Fault injection at an AWS SDK client: a request reaches the service and is applied, but its answer is lost on the
 * way back (a connection reset, as when a service or a proxy restarts mid-request). The SDK then retries the same
 * request, so a conditional write meets its own effect: `ConditionalCheckFailedException` for a write that did happen.
 * Every caller of a conditional write must read that answer as "maybe it was me".
 */
export interface AnswerLoss {
  /** Answers lost so far. */
  lost(): number;
  /** Stops losing answers. */
  stop(): void;
}

export interface AnswerLossOptions {
  /** Which requests may lose their answer (command name, and its input as the client got it: marshalled for DynamoDB). */
  match: (commandName: string, input: Record<string, unknown>) => boolean;
  /** Lose the answers of at most this many matching requests. */
  count: number;
  /** Lose only every n-th matching request (default 1: each one, until `count`). */
  every?: number;
}

/** Any AWS SDK v3 client (its overloaded `add` is typed per step; this helper adds one finalizeRequest middleware). */
interface MiddlewareClient {
  middlewareStack: {
    add(middleware: never, options: never): void;
    remove(name: string): boolean;
  };
}

let counter = 0;

export function loseAnswers(client: MiddlewareClient, options: AnswerLossOptions): AnswerLoss {
  const name = `sluiceLocalLostAnswers${++counter}`;
  let seen = 0;
  let lost = 0;
  type Args = { input: Record<string, unknown>; request?: { headers?: Record<string, string> } };
  const middleware = (next: (args: Args) => Promise<unknown>, context: { commandName?: string }) => async (args: Args) => {
    const result = await next(args);
    // Only a first attempt loses its answer: the SDK's retry of it then gets through, as after one reset.
    const firstAttempt = !/attempt=([2-9]|\d\d)/.test(args.request?.headers?.['amz-sdk-request'] ?? '');
    if (
      firstAttempt &&
      lost < options.count &&
      options.match(context.commandName ?? '', args.input) &&
      ++seen % (options.every ?? 1) === 0
    ) {
      lost++;
      // What the SDK sees when the connection drops before the response: a transient network error, retried.
      throw Object.assign(new Error('socket hang up (fault injection: the answer was lost after the request was applied)'), {
        code: 'ECONNRESET',
        $metadata: {},
      });
    }
    return result;
  };
  // Below the retry middleware (finalizeRequest, high priority), so that each attempt can lose its answer and the
  // SDK's own retry sends the request again, as it would after a real reset.
  client.middlewareStack.add(middleware as never, { step: 'finalizeRequest', name, priority: 'low' } as never);
  return { lost: () => lost, stop: () => void client.middlewareStack.remove(name) };
}
