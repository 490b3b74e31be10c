/** Every error Sluice raises on purpose, in one place. `name` is set so logs and metrics can group them. */
export class SluiceError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The message is not a job Sluice can run (bad JSON, wrong shape, unknown pool). It goes to the DLQ, never retried. */
export class InvalidJobError extends SluiceError {}

/** The pool named by a job is neither configured nor present in the table. */
export class UnknownPoolError extends InvalidJobError {}

/** A keyed limit named by a job is neither set in the table nor has a configured default for its prefix. */
export class UnknownLimitError extends InvalidJobError {}

/** A job's weight is more than one of its limits can ever hold. */
export class WeightTooLargeError extends InvalidJobError {}

/** A job overrides what its stage's policy does not allow (shared/domain/overridePolicy.ts). */
export class OverrideNotAllowedError extends InvalidJobError {}

/** A job's notBefore is further ahead than Sluice holds a job (a year). */
export class NotBeforeTooFarError extends InvalidJobError {}

/** A completion event that does not have the shape its source promises. */
export class InvalidEventError extends SluiceError {}

/** Starting a run failed in a way that may pass: throttling, the job's own concurrency, a service quota. */
export class TransientStartError extends SluiceError {
  constructor(
    message: string,
    readonly code: string,
    options?: { cause?: unknown; definite?: boolean },
  ) {
    super(message, options);
    this.definite = options?.definite ?? true;
  }

  /** The service answered and refused: this call started nothing. False when no answer came (a network failure). */
  readonly definite: boolean;
}

/** Starting a run failed for good: validation, access denied, flow or job not found. */
export class PermanentStartError extends SluiceError {
  constructor(
    message: string,
    readonly code: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * Other writers kept changing an item a write depended on (a busy limit's counter: bookings of its start rate,
 * transactions on it), through every try: nothing was written. Contention, not a verdict: try again later.
 */
export class ContentionError extends SluiceError {}

/**
 * A pool's counter could not be made to follow the configuration (shared/app/gates.ts, followConfiguration) before a
 * take that depends on it: nothing was taken. The message comes back and the take is tried again.
 */
export class CounterSwitchError extends SluiceError {}

/**
 * A job API call other than a start (a run's status, a stop) failed, as the kind's error table takes it
 * (shared/kinds/apiErrors.ts): `transient` may pass by asking again; `permanent` is Sluice's request or permissions
 * (a misconfiguration), which asking again will not fix. Either way the run may still be going.
 */
export class JobApiError extends SluiceError {
  constructor(
    message: string,
    readonly code: string,
    readonly take: 'transient' | 'permanent',
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Configuration the functions were given is unusable (a missing variable, a malformed pools map). */
export class ConfigurationError extends SluiceError {}

/**
 * RETRY_FOR_SECONDS lets a start be resumed later than a kind can find the run an earlier start call made (AppFlow's
 * client token lasts 8 hours): a resumed start could then run the job twice.
 */
export class RetryWindowTooLongError extends ConfigurationError {}

/** `npm start`'s command line is wrong (an unknown flag, a value out of range): one line and a usage hint, exit 2. */
export class StartUsageError extends SluiceError {}

/** `npm start -- --serve` while another resident local stack runs: the message names its process and ports. */
export class LocalStackRunningError extends SluiceError {}

/** A port the resident local stack was asked to listen on is taken by another program. */
export class PortInUseError extends SluiceError {}

/** The sample workload did not finish in time (`npm start --timeout-s`). */
export class WorkloadTimeoutError extends SluiceError {}

/** `sluice enqueue`'s file cannot be read: the message names the path and why. */
export class InputFileError extends SluiceError {}

/** A job sets file (or one of its sets or jobs) is not valid: packaging, the tests and the expander refuse it. */
export class InvalidJobSetsError extends SluiceError {}

/** A job set named by a schedule, the CLI or an invocation is not declared. */
export class UnknownJobSetError extends SluiceError {}

/**
 * Local stack: an AWS call made by a Lambda invocation that was abandoned (it ran past its function's timeout). On AWS
 * the environment is frozen or shut down at the timeout and the call is never made; here the call is refused.
 */
export class InvocationAbandonedError extends SluiceError {}

/** Local stack: an invocation that ran past its function's timeout (Lambda's own wording: "Task timed out after ..."). */
export class FunctionTimeoutError extends SluiceError {}

/** Local stack: a failure a test asked the stack to inject (`stack.lambda.faults`). */
export class InjectedFaultError extends SluiceError {}
