/** Counts AWS requests per service and operation at the SDK middleware, for the benchmark and for tests. */
export class RequestCounter {
  private readonly counts = new Map<string, number>();

  add(service: string, operation: string): void {
    const key = `${service}.${operation}`;
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }

  snapshot(): Record<string, number> {
    return Object.fromEntries([...this.counts.entries()].sort(([a], [b]) => a.localeCompare(b)));
  }

  byService(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [key, n] of this.counts) {
      const service = key.split('.')[0]!;
      out[service] = (out[service] ?? 0) + n;
    }
    return out;
  }

  reset(): void {
    this.counts.clear();
  }
}

interface MiddlewareClient {
  middlewareStack: {
    add(
      middleware: (
        next: (args: unknown) => Promise<unknown>,
        context: { clientName?: string; commandName?: string },
      ) => (args: unknown) => Promise<unknown>,
      options: { step: 'initialize'; name: string },
    ): void;
  };
}

/**
 * Wraps a client so each command it sends is counted (once per call, whatever the SDK's own retries do). `when`: only
 * the calls made while it says so (read in the caller's async context); `name`: the middleware's name, for a second
 * counter on the same client.
 */
export function countRequests(
  client: unknown,
  service: string,
  counter: RequestCounter,
  options: { when?: () => boolean; name?: string } = {},
): void {
  (client as MiddlewareClient).middlewareStack.add(
    (next, context) => async (args) => {
      if (!options.when || options.when()) counter.add(service, (context.commandName ?? 'Unknown').replace(/Command$/, ''));
      return next(args);
    },
    { step: 'initialize', name: `${options.name ?? 'sluiceCount'}${service}` },
  );
}
