/**
 * How Sluice takes every error a job API can answer: one table per operation a kind's starter calls, in the kind's
 * folder (`apiErrors.ts`), each error with an explicit take and a one-line reason. Pure data and pure functions (no
 * SDK import: error names are strings). test/unit/kinds/apiErrors.test.ts holds the tables to the SDK clients' own
 * exception classes (every `@throws` of every command a starter sends, no name the SDK does not know), and
 * test/component/kinds/apiErrors.test.ts drives every entry through the real starter against the simulator.
 */

/** What a call is for, which decides what its errors can mean. */
export const CallRole = {
  /** Starts a run (StartFlow, RunTask, a callback's start message): an error may or may not have started one. */
  Start: 'start',
  /** Looks for the run an earlier start may have made (GetJobRuns, ListJobs), before starting again. */
  Lookup: 'lookup',
  /** Asks how a run is doing (the reconciler). */
  Status: 'status',
  /** Stops a run (a run past its time, `sluice cancel --stop`). */
  Stop: 'stop',
} as const;
export type CallRole = (typeof CallRole)[keyof typeof CallRole];

/** How a start call's error is taken. */
export const StartTake = {
  /** The service answered and refused: nothing started. Retried with backoff, the slot given back meanwhile. */
  Refused: 'refused',
  /** The answer proves nothing: a run may have started. Retried holding the slot, looking for that run first. */
  Uncertain: 'uncertain',
  /** The job is wrong and will stay wrong; nothing started. Dead-lettered with the reason. */
  Permanent: 'permanent',
} as const;
export type StartTake = (typeof StartTake)[keyof typeof StartTake];

/** How a status or lookup call's error is taken. */
export const ReadTake = {
  /** Ask again later (throttling, a server fault): says nothing about the run. */
  Transient: 'transient',
  /**
   * The API answers that the run, or the flow, job, state machine, cluster it belongs to, does not exist: the status is
   * RunStatus.Gone (a lookup finds no earlier run). Never a permission error: a permissions mistake must not free slots.
   */
  Gone: 'gone',
  /** Sluice's request or permissions are wrong (misconfiguration): asking again will not help until someone fixes it. */
  Permanent: 'permanent',
} as const;
export type ReadTake = (typeof ReadTake)[keyof typeof ReadTake];

/** How a stop call's error is taken (a stop that answers is StopResult.Stopped). */
export const StopTake = {
  /** There is nothing left to stop: the run ended, or it or its flow / job / cluster no longer exists. */
  AlreadyEnded: 'already-ended',
  /** Try again later; the run may still be going. */
  Transient: 'transient',
  /** Sluice's request or permissions are wrong; the run may still be going. */
  Permanent: 'permanent',
} as const;
export type StopTake = (typeof StopTake)[keyof typeof StopTake];

/** What a stop did: the starters' stop() answers it (the run was stopped, or there was nothing left to stop). */
export { StopResult } from '../ports/jobStarter';

export type TakeFor<R extends CallRole> = R extends typeof CallRole.Start
  ? StartTake
  : R extends typeof CallRole.Stop
    ? StopTake
    : ReadTake;

/** A message that changes an error's take (ECS answers a capacity refusal as ClientException). Checked in order. */
export interface MessageCase<T> {
  readonly match: RegExp;
  /** A message of this case (the tests answer it through the simulator and expect this take). */
  readonly example: string;
  readonly take: T;
  readonly why: string;
}

export interface ErrorEntry<T> {
  readonly take: T;
  readonly why: string;
  readonly byMessage?: readonly MessageCase<T>[];
  /**
   * For a name that is neither an exception class of the SDK client nor one of the errors every AWS API shares: where
   * AWS documents it (a PutEvents entry's ErrorCode, Batch's throttling).
   */
  readonly documentedAt?: string;
  /** With documentedAt: the HTTP status AWS answers it with (the SDK's model has it for its own classes). */
  readonly http?: number;
  /** The starter answers this error itself before it is classified (what it does); `take` is for when it cannot. */
  readonly handled?: string;
}

export type ErrorTable<T> = Readonly<Record<string, ErrorEntry<T>>>;

/** One operation a starter calls, with every error it can return. */
export interface OperationErrors<R extends CallRole = CallRole> {
  /** The API's operation name, as the SDK's command is named without `Command`: `StartFlow`, `DescribeTasks`. */
  readonly operation: string;
  /** The npm package of the SDK client that sends it. */
  readonly client: string;
  readonly role: R;
  /** The operation's API reference page. */
  readonly reference: string;
  /** The service's page of the errors every AWS API shares (COMMON_ERRORS). */
  readonly commonErrors: string;
  /** The operation's own errors: every exception of the SDK command's `@throws`, and any other it documents. */
  readonly errors: ErrorTable<TakeFor<R>>;
}

/** Any operation's table, whatever its role. */
export type AnyOperationErrors = { [R in CallRole]: OperationErrors<R> }[CallRole];

interface CommonError {
  readonly http: number;
  readonly start: StartTake;
  readonly read: ReadTake;
  readonly stop: StopTake;
  readonly why: string;
}

const { Refused, Uncertain, Permanent } = StartTake;
const ANY_PERMANENT = { start: Permanent, read: ReadTake.Permanent, stop: StopTake.Permanent } as const;
const ANY_TRANSIENT = { read: ReadTake.Transient, stop: StopTake.Transient } as const;

/**
 * The errors every AWS API can answer, with their HTTP status, from the services' "Common Errors" pages (each
 * operation's `commonErrors`; the same list on each, e.g. https://docs.aws.amazon.com/lambda/latest/api/CommonErrors.html
 * and https://docs.aws.amazon.com/AmazonECS/latest/APIReference/CommonErrors.html). An operation's own table wins
 * over these (AppFlow's ThrottlingException is its own class, answered with 429).
 */
export const COMMON_ERRORS: Readonly<Record<string, CommonError>> = {
  AccessDeniedException: {
    http: 403,
    ...ANY_PERMANENT,
    why: 'a permission is missing: it stays wrong until IAM is fixed (never taken as gone)',
  },
  ExpiredTokenException: {
    http: 403,
    start: Refused,
    ...ANY_TRANSIENT,
    why: 'the credentials expired: refused before anything ran; the next call signs with renewed credentials',
  },
  IncompleteSignature: { http: 403, ...ANY_PERMANENT, why: 'the request signature is malformed: every request is signed the same way' },
  InternalFailure: { http: 500, start: Uncertain, ...ANY_TRANSIENT, why: 'a server fault: the request may have done its work' },
  MalformedHttpRequestException: { http: 400, ...ANY_PERMANENT, why: 'the request cannot be read: it is sent the same way again' },
  NotAuthorized: { http: 401, ...ANY_PERMANENT, why: 'no permission for this action: it stays wrong until IAM is fixed' },
  OptInRequired: { http: 403, ...ANY_PERMANENT, why: 'the account is not subscribed to the service' },
  RequestAbortedException: {
    http: 400,
    start: Uncertain,
    ...ANY_TRANSIENT,
    why: 'the request was aborted before its answer: it may have done its work',
  },
  RequestEntityTooLargeException: { http: 413, ...ANY_PERMANENT, why: 'the request is too large: it is as large next time' },
  RequestExpired: {
    http: 400,
    start: Refused,
    ...ANY_TRANSIENT,
    why: 'the request arrived more than 15 minutes after it was signed (or the clock is off): refused before anything ran',
  },
  RequestTimeoutException: {
    http: 408,
    start: Uncertain,
    ...ANY_TRANSIENT,
    why: 'reading the request timed out: whether the service acted on it is not known',
  },
  ServiceUnavailable: {
    http: 503,
    start: Uncertain,
    ...ANY_TRANSIENT,
    why: 'a temporary server failure: the request may have done its work',
  },
  ThrottlingException: { http: 400, start: Refused, ...ANY_TRANSIENT, why: 'throttled: refused before anything ran' },
  UnrecognizedClientException: { http: 403, ...ANY_PERMANENT, why: 'the access key is not known' },
  UnknownOperationException: { http: 404, ...ANY_PERMANENT, why: 'the endpoint does not serve this operation' },
  ValidationError: { http: 400, ...ANY_PERMANENT, why: 'the input fails the service constraints: it fails the same way again' },
};

/** The common errors' takes for one role. */
function commonTable<R extends CallRole>(role: R): ErrorTable<TakeFor<R>> {
  const pick = (e: CommonError) => (role === CallRole.Start ? e.start : role === CallRole.Stop ? e.stop : e.read) as TakeFor<R>;
  return Object.fromEntries(Object.entries(COMMON_ERRORS).map(([name, e]) => [name, { take: pick(e), why: e.why }]));
}

/** Every error an operation can return, the common ones included, with its take: the operation's own entries win. */
export function fullTable<R extends CallRole>(op: OperationErrors<R>): ErrorTable<TakeFor<R>> {
  return { ...commonTable(op.role), ...op.errors };
}

/** What Sluice reads of an error: the SDK's name (the exception class or error code), its message, the HTTP status. */
export interface ApiErrorView {
  readonly name?: string | undefined;
  readonly message?: string | undefined;
  readonly httpStatus?: number | undefined;
  /** The SDK marks it as throttling ($retryable.throttling). */
  readonly throttling?: boolean | undefined;
}

export interface Classified<T> {
  readonly take: T;
  readonly why: string;
  /** The error's name, or `Error` when it has none. */
  readonly code: string;
  /** Whether the table names it; an undocumented error is taken by its HTTP status (fallbackTake). */
  readonly documented: boolean;
}

const TOO_MANY_REQUESTS = 429;

/**
 * An error no table names (a new exception, a network failure with no answer): taken by its HTTP status. Throttling
 * (429 or the SDK's throttling mark) is a refusal; another 4xx is the request's own fault (permanent); a 5xx, or no
 * answer at all, proves nothing (uncertain for a start, transient otherwise).
 */
export function fallbackTake<R extends CallRole>(role: R, error: ApiErrorView): TakeFor<R> {
  const status = error.httpStatus;
  const throttled = error.throttling === true || status === TOO_MANY_REQUESTS;
  const clientFault = status !== undefined && status >= 400 && status < 500;
  const take =
    role === CallRole.Start
      ? throttled
        ? Refused
        : clientFault
          ? Permanent
          : Uncertain
      : role === CallRole.Stop
        ? !throttled && clientFault
          ? StopTake.Permanent
          : StopTake.Transient
        : !throttled && clientFault
          ? ReadTake.Permanent
          : ReadTake.Transient;
  return take as TakeFor<R>;
}

/** How Sluice takes `error` from `op`: by its table (and the entry's message cases), else by its HTTP status. */
export function classifyApiError<R extends CallRole>(op: OperationErrors<R>, error: ApiErrorView): Classified<TakeFor<R>> {
  const code = error.name || 'Error';
  const table = fullTable(op);
  const entry = Object.hasOwn(table, code) ? table[code] : undefined;
  if (!entry) {
    const how = error.httpStatus === undefined ? 'no answer' : `HTTP ${error.httpStatus}`;
    return {
      take: fallbackTake(op.role, error),
      why: `not in the ${op.operation} table: taken by its answer (${how})`,
      code,
      documented: false,
    };
  }
  const byMessage = entry.byMessage?.find((c) => c.match.test(error.message ?? ''));
  return { take: (byMessage ?? entry).take, why: (byMessage ?? entry).why, code, documented: true };
}
