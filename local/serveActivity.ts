import { DynamoJobLedger } from '../shared/adapters/dynamodb/jobLedger';
import { stageRefusals, type StageSettings } from '../shared/app/stageCheck';
import type { LocalStack } from './stack';
import { jobIdOfRun } from './simulators/simulatedKinds';

export { jobIdOfRun };

const clock = () => new Date().toISOString().slice(11, 23);

/**
 * One line per run started and ended (from the job API simulator's record, looked at 4 times a second) and per
 * job sent to the dead-letter queue (seen on the functions' own SQS client), as they happen. Returns the stop function.
 */
export function watchActivity(stack: LocalStack, log: (line: string) => void, options: { checkStage?: StageSettings } = {}): () => void {
  const started = new Set<string>();
  const ended = new Set<string>();
  const warned = new Set<string>();
  const ledger = new DynamoJobLedger(stack.doc, stack.tableName);
  // Locally any name runs; a deployed stage starts only what its settings allow: each refusal is said once.
  const check = async (jobId: string) => {
    const record = await ledger.get(jobId).catch(() => undefined);
    if (!record || !options.checkStage) return;
    for (const reason of stageRefusals(record.spec, options.checkStage, Date.now())) {
      if (warned.has(reason)) continue;
      warned.add(reason);
      log(`${clock()} warning   job ${jobId}: ${reason}`);
    }
  };
  const look = () => {
    for (const run of stack.simulator.runs()) {
      const jobId = jobIdOfRun(run);
      const what = `${run.kind.padEnd(7)} ${run.name}  job ${jobId ?? '?'}  run ${run.executionId}`;
      if (!started.has(run.executionId)) {
        started.add(run.executionId);
        log(`${clock()} start     ${what}`);
        if (jobId && options.checkStage) void check(jobId);
      }
      if (run.endedAt !== undefined && !ended.has(run.executionId)) {
        ended.add(run.executionId);
        log(`${clock()} ${(run.outcome ?? 'ended').padEnd(9)} ${what}  after ${((run.endedAt - run.startedAt) / 1000).toFixed(1)} s`);
      }
    }
  };
  const timer = setInterval(look, 250);
  let watching = true;
  stack.sqs.middlewareStack.add(
    (next, context) => async (args) => {
      const result = await next(args);
      const input = (
        args as { input: { QueueUrl?: string; MessageBody?: string; MessageAttributes?: Record<string, { StringValue?: string }> } }
      ).input;
      if (watching && context.commandName === 'SendMessageCommand' && input.QueueUrl === stack.deadLetterUrl) {
        const reason = input.MessageAttributes?.['sluice-reason']?.StringValue ?? 'no reason given';
        log(`${clock()} dead      ${jobIdInBody(input.MessageBody)}: ${reason}`);
      }
      return result;
    },
    { step: 'initialize', name: 'sluiceServeActivity' },
  );
  return () => {
    watching = false;
    clearInterval(timer);
    look();
  };
}

function jobIdInBody(body: string | undefined): string {
  try {
    const id = (JSON.parse(body ?? '') as { id?: unknown }).id;
    return typeof id === 'string' ? `job ${id}` : 'a message';
  } catch {
    return 'a message (not JSON)';
  }
}

/** What every function's log line carries (Lambda's context and Powertools' own): said once by the line's head. */
const CONTEXT_FIELDS = new Set([
  'level',
  'message',
  'timestamp',
  'service',
  'cold_start',
  'function_arn',
  'function_memory_size',
  'function_name',
  'function_request_id',
  'sampling_rate',
  'xray_trace_id',
]);

/**
 * A function's log line (Powertools writes one JSON object per line) as one readable line of the stack's log, the same
 * shape as the activity lines: `08:55:24.958 warn      releaser: message (field value, ...)`. Undefined for a line
 * that is not such a log line (printed as it is); '' for one the activity lines say already (a dead letter).
 */
export function readableLogLine(line: string): string | undefined {
  if (!line.startsWith('{"level"')) return undefined;
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  if (typeof entry.level !== 'string' || typeof entry.message !== 'string') return undefined;
  if (entry.message === 'job dead-lettered') return '';
  const at = typeof entry.timestamp === 'string' ? entry.timestamp.slice(11, 23) : clock();
  const fn = typeof entry.function_name === 'string' ? `${entry.function_name.replace(/^sluice-[^-]+-/, '')}: ` : '';
  const fields = Object.entries(entry)
    .filter(([name]) => !CONTEXT_FIELDS.has(name))
    .map(([name, value]) => `${name} ${describeValue(value)}`);
  return `${at} ${entry.level.toLowerCase().padEnd(9)} ${fn}${entry.message}${fields.length ? ` (${fields.join(', ')})` : ''}`;
}

/** A field of a log line: text as it is, an error by its name and message, anything else as JSON. */
function describeValue(value: unknown): string {
  if (typeof value === 'string') return value;
  const error = value as { name?: unknown; message?: unknown } | null;
  if (error && typeof error === 'object' && typeof error.message === 'string')
    return `${typeof error.name === 'string' ? `${error.name}: ` : ''}${error.message}`;
  return JSON.stringify(value);
}

/**
 * Makes the functions' JSON log lines, written to stdout or stderr by this process or its worker threads, readable
 * lines of the stack's log (stderr); stdout keeps only what the stack prints there itself (its export lines). Returns
 * the function that puts the streams back.
 */
export function readableFunctionLogs(): () => void {
  const stdout = process.stdout.write;
  const stderr = process.stderr.write;
  const wrap = (stream: NodeJS.WriteStream, original: typeof stream.write) =>
    function (this: NodeJS.WriteStream, chunk: unknown, ...rest: unknown[]): boolean {
      const text = typeof chunk === 'string' ? chunk : Buffer.isBuffer(chunk) ? chunk.toString('utf8') : undefined;
      if (text === undefined || !text.includes('{"level"')) return original.call(stream, chunk as string, ...(rest as []));
      const kept: string[] = [];
      const logs: string[] = [];
      for (const line of text.split('\n')) {
        const readable = readableLogLine(line);
        if (readable === undefined) kept.push(line);
        else if (readable !== '') logs.push(readable);
      }
      if (logs.length > 0) stderr.call(process.stderr, `${logs.join('\n')}\n`);
      const remaining = kept.join('\n');
      if (remaining === '') {
        rest.find((r): r is () => void => typeof r === 'function')?.();
        return true;
      }
      return original.call(stream, remaining, ...(rest as []));
    } as typeof stream.write;
  process.stdout.write = wrap(process.stdout, stdout);
  process.stderr.write = wrap(process.stderr, stderr);
  return () => {
    process.stdout.write = stdout;
    process.stderr.write = stderr;
  };
}
