import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { FunctionTimeoutError, InvocationAbandonedError } from '../../shared/errors';

/**
 * One Lambda invocation of the local stack, and its end as AWS ends it. Each invocation runs inside an
 * AsyncLocalStorage scope; when it runs past its timeout the caller is told at once that it failed (Lambda's "Task
 * timed out") and the scope is abandoned. JavaScript cannot kill the handler's promise, so the invocation is fenced
 * instead: the SDK middleware `fenceAbandonedInvocations` adds to the stack's clients refuses every AWS call an
 * abandoned invocation makes, and an answer that arrives after the abandonment is not handed to it. On AWS the
 * environment is frozen or shut down at the timeout, so no call of that invocation is made after it; the caller counts
 * the timeout as a function error (https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-error-handling.html).
 */
export class InvocationScope {
  readonly requestId = randomUUID();
  private readonly controller = new AbortController();
  private why: string | undefined;

  constructor(readonly functionName: string) {}

  get abandoned(): boolean {
    return this.controller.signal.aborted;
  }

  get reason(): string | undefined {
    return this.why;
  }

  /** Aborted when the invocation is abandoned (a function worker fences its own calls on it). */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  abandon(reason: string): void {
    if (this.abandoned) return;
    this.why = reason;
    this.controller.abort(new InvocationAbandonedError(`invocation ${this.requestId} of ${this.functionName} was abandoned: ${reason}`));
  }
}

const storage = new AsyncLocalStorage<InvocationScope>();

/** The invocation the current code runs in, if any (the stack's own calls, a poller's receive, run in none). */
export function currentInvocation(): InvocationScope | undefined {
  return storage.getStore();
}

export type InvocationResult = { ok: true; value: unknown } | { ok: false; error: unknown; timedOut: boolean };

export interface RunInvocationOptions {
  functionName: string;
  /** the function's timeout for this invocation */
  timeoutMs: number;
  run: (scope: InvocationScope) => Promise<unknown>;
  /** Told of an abandoned invocation's promise, which settles later (a caller's stop() may wait for it). */
  onAbandoned?: (still: Promise<unknown>) => void;
  /** Called with the scope before the handler starts (a fault hook may abandon it at a point of its choosing). */
  onStart?: (scope: InvocationScope) => void;
}

/**
 * Runs one invocation in its own scope with its function's timeout. A timeout is a failed invocation (the caller
 * retries it by its own rules) and the scope is abandoned; a scope abandoned another way (the stack stopping, a test)
 * fails the same way, with the reason it was given (`timedOut` false).
 */
export async function runInvocation(options: RunInvocationOptions): Promise<InvocationResult> {
  const scope = new InvocationScope(options.functionName);
  options.onStart?.(scope);
  const running = storage.run(scope, () => Promise.resolve().then(() => options.run(scope)));
  const seconds = (options.timeoutMs / 1000).toFixed(2);
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  let timedOut = false;
  const ended = new Promise<'abandoned'>((resolve) => {
    timer = setTimeout(() => {
      timedOut = true;
      scope.abandon(`timed out after ${seconds} s`);
    }, options.timeoutMs);
    onAbort = () => resolve('abandoned');
    if (scope.abandoned)
      resolve('abandoned'); // by onStart
    else scope.signal.addEventListener('abort', onAbort, { once: true });
  });
  const answered = running.then((value) => ({ value }));
  answered.catch(() => undefined); // read by the race, or never (abandoned first): not an unhandled rejection
  try {
    const first = await Promise.race([answered, ended]);
    if (first !== 'abandoned') return { ok: true, value: first.value };
    options.onAbandoned?.(running.catch(() => undefined));
    // Lambda's own wording for a timeout; any other end (the stack stopping, a fault) says why
    const error = timedOut ? new FunctionTimeoutError(`Task timed out after ${seconds} seconds`) : (scope.signal.reason as Error);
    return { ok: false, error, timedOut };
  } catch (error) {
    return { ok: false, error, timedOut: false };
  } finally {
    clearTimeout(timer);
    if (onAbort) scope.signal.removeEventListener('abort', onAbort);
  }
}

/** An SDK v3 client, as far as adding a middleware goes. */
export interface FenceableClient {
  middlewareStack: {
    add(
      middleware: (next: (args: unknown) => Promise<unknown>, context: { commandName?: string }) => (args: unknown) => Promise<unknown>,
      options: { step: 'finalizeRequest'; priority: 'low'; name: string; tags?: string[] },
    ): void;
  };
}

/**
 * Refuses the AWS calls of an abandoned invocation: each attempt (inside the SDK's own retries) is checked before it
 * is sent, and an answer that comes back after the abandonment is not given to the code (it would never run on AWS).
 */
export function fenceAbandonedInvocations(client: unknown, current: () => InvocationScope | undefined = currentInvocation): void {
  (client as FenceableClient).middlewareStack.add(
    (next, context) => async (args) => {
      const refuse = (scope: InvocationScope, when: string) =>
        new InvocationAbandonedError(
          `${context.commandName ?? 'a call'} ${when} by invocation ${scope.requestId} of ${scope.functionName}, abandoned: ${scope.reason ?? ''}`,
        );
      const scope = current();
      if (scope?.abandoned) throw refuse(scope, 'refused: made');
      const result = await next(args);
      if (scope?.abandoned) throw refuse(scope, 'answered after the invocation was abandoned; not given');
      return result;
    },
    { step: 'finalizeRequest', priority: 'low', name: 'sluiceInvocationFence' },
  );
}
