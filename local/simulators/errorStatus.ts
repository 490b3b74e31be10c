import { type AnyOperationErrors, COMMON_ERRORS } from '../../shared/kinds/apiErrors';

/**
 * The HTTP status a service answers an error with, so the real SDK client reads the simulator's error as it reads
 * AWS's ($metadata.httpStatusCode, the fault): from the SDK client's own model first (each exception's schema, exported
 * as `<Name>$`, carries its `httpError` trait where the protocol has one (REST-JSON: AppFlow, Batch, Lambda) and its
 * fault: AWS JSON protocols answer client faults with 400 and server faults with 500), then the errors every AWS API
 * shares (shared/kinds/apiErrors.ts COMMON_ERRORS), then a status a kind's table documents for a name the SDK does not
 * model (Batch's TooManyRequestsException: 429), else 400.
 */
export function errorStatus(client: string, name: string, tables: readonly AnyOperationErrors[] = []): number {
  const modelled = modelledStatus(client, name);
  if (modelled !== undefined) return modelled;
  const common = COMMON_ERRORS[name];
  if (common) return common.http;
  const documented = tables.map((t) => (Object.hasOwn(t.errors, name) ? t.errors[name]?.http : undefined)).find((s) => s !== undefined);
  return documented ?? 400;
}

/** An SDK error schema: [-3, namespace, name, { error: 'client' | 'server', httpError?: number }, members...]. */
const ERROR_SCHEMA = -3;

/** The status the SDK's model gives `name` (undefined when the client has no such exception). */
export function modelledStatus(client: string, name: string): number | undefined {
  const sdk = loadClient(client);
  const schema = sdk[`${name}$`];
  if (Array.isArray(schema) && schema[0] === ERROR_SCHEMA && schema[2] === name) {
    const traits = (schema[3] ?? {}) as { error?: string; httpError?: number };
    if (typeof traits.httpError === 'number') return traits.httpError;
    return traits.error === 'server' ? 500 : 400;
  }
  return undefined;
}

const clients = new Map<string, Record<string, unknown>>();

function loadClient(client: string): Record<string, unknown> {
  let sdk = clients.get(client);
  if (!sdk) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    sdk = require(client) as Record<string, unknown>;
    clients.set(client, sdk);
  }
  return sdk;
}
