/**
 * Short readable forms of port calls and their answers for schedule labels: `leases.take(p1 j1 v1->starting
 * startRequested)`, `ledger.move(j1 v2->running executionId=...)`, `leases.pass(p1 j1 v3->succeeded j2) -> passed`. Generic: any method of any port gets a readable label from
 * the shapes of its arguments (job specs, records, waiters, run refs), so renamed or new port methods need no change.
 */

const EPOCH_LIKE = 1e12;
const MAX = 70;

function clip(text: string, max = MAX): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** A job spec, possibly as JSON (a message body). */
function specId(value: unknown): string | undefined {
  if (typeof value === 'string' && value.startsWith('{')) {
    try {
      return specId(JSON.parse(value));
    } catch {
      return undefined;
    }
  }
  if (value && typeof value === 'object' && 'id' in value && 'kind' in value) return String((value as { id: unknown }).id);
  return undefined;
}

function describeObject(value: Record<string, unknown>): string | undefined {
  const id = specId(value);
  if (id) return id;
  // a version-fenced move: "j1 v2->starting startRequested"
  if (typeof value.jobId === 'string' && typeof value.version === 'number' && typeof value.to === 'string') {
    const patch = value.patch && typeof value.patch === 'object' ? describeObject(value.patch as Record<string, unknown>) : undefined;
    return [`${value.jobId} v${value.version}->${value.to}`, patch].filter(Boolean).join(' ');
  }
  // a waiter, a run ref, a completion, a record
  const parts: string[] = [];
  if (typeof value.jobId === 'string') parts.push(value.jobId);
  else if (typeof value.name === 'string' && typeof value.executionId === 'string') parts.push(value.name);
  if (typeof value.state === 'string') parts.push(value.state);
  if (typeof value.executionId === 'string') parts.push(value.executionId);
  if (typeof value.outcome === 'string') parts.push(value.outcome);
  if (parts.length > 0) {
    if (value.startRequested === true) parts.push('startRequested');
    if (typeof value.version === 'number') parts.push(`v${value.version}`);
    return parts.join(' ');
  }
  // a pool snapshot
  if (typeof value.limit === 'number' && value.holders && typeof value.holders === 'object') {
    return `limit ${value.limit} holders [${Object.keys(value.holders).join(',')}]`;
  }
  // a transition patch, options (a holder's kind and times say little; long texts such as lastError only by name)
  const fields = Object.entries(value)
    .filter(([k, v]) => v !== undefined && k !== 'kind' && !(typeof v === 'number' && v > EPOCH_LIKE))
    .map(([k, v]) =>
      v === true ? k : typeof v === 'string' && v.length > 16 ? k : `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`,
    );
  return fields.length > 0 ? fields.join(' ') : undefined;
}

export function describeValue(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (value === null) return 'null';
  if (typeof value === 'number') return value > EPOCH_LIKE ? undefined : String(value); // times say little here
  if (typeof value === 'boolean') return String(value);
  if (typeof value === 'string') {
    const id = specId(value);
    if (id) return id;
    const waitKey = /^\d{15}#(.+)$/.exec(value);
    return waitKey ? waitKey[1] : clip(value, 40);
  }
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    if (value.every((v) => typeof v === 'string' && !v.startsWith('{'))) return value.join('|');
    return `[${value.map((v) => describeValue(v) ?? '-').join(', ')}]`;
  }
  if (typeof value === 'object') return describeObject(value as Record<string, unknown>);
  return typeof value;
}

export function describeCall(port: string, method: string, args: readonly unknown[]): string {
  let text: string;
  if (method === 'send' && typeof args[0] === 'string' && typeof args[1] === 'number') {
    // (body, delaySeconds, options) -> "j1 delay=2s reserved"
    const options = describeValue(args[2]);
    text = [describeValue(args[0]), args[1] > 0 ? `delay=${args[1]}s` : undefined, options].filter(Boolean).join(' ');
  } else {
    text = args
      .map(describeValue)
      .filter((d): d is string => d !== undefined)
      .join(' ');
  }
  return `${port}.${method}(${clip(text)})`;
}

export function describeResult(value: unknown): string {
  if (value === undefined) return 'ok';
  if (value && typeof value === 'object' && 'created' in value && 'record' in value) {
    const { created, record } = value as { created: boolean; record: unknown };
    return created ? 'created' : `known: ${describeValue(record)}`;
  }
  return clip(describeValue(value) ?? 'ok', 60);
}

export function describeError(error: unknown): string {
  if (error && typeof error === 'object') {
    const e = error as { name?: string; code?: string; message?: string; definite?: boolean };
    if (e.name === 'TransientStartError' || e.name === 'PermanentStartError')
      return `${e.name}(${e.code}${e.definite === false ? ', not definite' : e.definite === true ? ', definite' : ''})`;
    if (e.name === 'SimulatedCrash') return 'crashed';
    return clip(`${e.name ?? 'Error'}: ${e.message ?? ''}`, 60);
  }
  return clip(String(error), 60);
}
