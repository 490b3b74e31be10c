/**
 * What the local stack and its function workers say to each other (local/workers): an invocation in, its
 * result out, and, from the worker, each AWS call its handlers made (counted by the stack; given whole to a listener
 * such as the bench's tracer, which reads the calls as it does on the in-process clients).
 */

export interface InvokeMessage {
  type: 'invoke';
  id: number;
  functionName: string;
  event: unknown;
  /** The Lambda context's name and remaining time, rebuilt in the worker. */
  context: { functionName: string; remainingMs: number; memoryLimitInMB?: number };
}

/** The stack abandoned invocation `id` (it ran past its timeout): the worker refuses its AWS calls from now on. */
export interface AbandonMessage {
  type: 'abandon';
  id: number;
  reason: string;
}

export type ToWorker = InvokeMessage | AbandonMessage;

/** An error as it crosses the thread: the fields the stack and the bench read. */
export interface ErrorShape {
  name: string;
  message: string;
  stack?: string;
  CancellationReasons?: Array<{ Code?: string; Message?: string }>;
}

export interface ResultMessage {
  type: 'result';
  id: number;
  ok: boolean;
  value?: unknown;
  error?: ErrorShape;
}

/** One AWS call a handler made: times are epoch ms; input and output only when the stack asked for them. */
export interface CallMessage {
  type: 'call';
  service: string;
  op: string;
  t0: number;
  t1: number;
  ms: number;
  ok: boolean;
  input?: unknown;
  output?: unknown;
  failure?: ErrorShape;
}

export interface ReadyMessage {
  type: 'ready';
}

export type FromWorker = ResultMessage | CallMessage | ReadyMessage;

/** What a worker is told when it starts. */
export interface WorkerSetup {
  /** Whether to send each call's input and output (a listener wants them), or only its name and times. */
  detailedCalls: boolean;
  region: string;
  accountId: string;
}

export function errorShape(error: unknown): ErrorShape {
  if (error instanceof Error) {
    const reasons = (error as { CancellationReasons?: ErrorShape['CancellationReasons'] }).CancellationReasons;
    return {
      name: error.name,
      message: error.message,
      ...(error.stack !== undefined && { stack: error.stack }),
      ...(reasons && { CancellationReasons: reasons.map((r) => ({ Code: r.Code, Message: r.Message })) }),
    };
  }
  return { name: 'Error', message: String(error) };
}

/** An error rebuilt on the stack's side, with the same name and message (and cancellation reasons). */
export function errorFrom(shape: ErrorShape): Error {
  const error = new Error(shape.message);
  error.name = shape.name;
  if (shape.stack) error.stack = shape.stack;
  if (shape.CancellationReasons) Object.assign(error, { CancellationReasons: shape.CancellationReasons });
  return error;
}
