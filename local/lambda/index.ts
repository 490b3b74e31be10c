export {
  AsyncInvoker,
  type AsyncAttempt,
  type AsyncEvent,
  type AsyncFailure,
  type AsyncFunction,
  type AsyncInvokerOptions,
  type LambdaFaults,
} from './asyncInvoker';
export {
  afterAttempt,
  ASYNC_DEFAULTS,
  asyncInvokeConfig,
  AttemptOutcome,
  DiscardCondition,
  FUNCTION_ERROR_RETRY_DELAYS_MS,
  invocationRecord,
  isExpired,
  THROTTLE_BACKOFF,
  type AsyncFunctionSettings,
  type AsyncInvokeConfig,
  type EventProgress,
  type InvocationRecord,
  type NextStep,
} from './asyncRules';
export {
  currentInvocation,
  fenceAbandonedInvocations,
  InvocationScope,
  runInvocation,
  type InvocationResult,
  type RunInvocationOptions,
} from './invocation';
export { fenceClients, localFunctionName, startLocalLambda, type LocalLambdaOptions } from './localLambda';
export { enforcedTimeoutMs } from './timeouts';
