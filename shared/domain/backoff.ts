/**
 * Exponential backoff with "equal jitter" (AWS Architecture Blog, "Exponential Backoff And Jitter": half the ceiling
 * plus a random half), bounded by time: a job refused for capacity (throttling, a job's own concurrent-runs limit)
 * keeps trying for `retryForSeconds` after its first start call instead of a few attempts, and once the delay is capped
 * it tries at most twice per `maxSeconds` (full jitter could draw delays of 1 s at any attempt).
 */
export interface BackoffPolicy {
  baseSeconds: number;
  maxSeconds: number;
  retryForSeconds: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = { baseSeconds: 2, maxSeconds: 900, retryForSeconds: 6 * 3600 };

/** SQS caps DelaySeconds at 900 (15 minutes). */
export const SQS_MAX_DELAY_SECONDS = 900;

/** The SQS delay of a message meant for `at`: whole seconds rounded up (never early), at most SQS_MAX_DELAY_SECONDS. */
export function delaySecondsUntil(at: number, now: number): number {
  return Math.min(SQS_MAX_DELAY_SECONDS, Math.ceil(Math.max(0, at - now) / 1000));
}

/**
 * Seconds to wait before retry number `attempt` (1 for the first retry). `random` returns [0, 1).
 * At least 1 second so a retry never spins.
 */
export function retryDelaySeconds(attempt: number, policy: BackoffPolicy, random: () => number): number {
  // Whole seconds: SQS takes an integer DelaySeconds. The exponent is capped so 2 ** n stays finite.
  const ceiling = Math.max(
    1,
    Math.floor(Math.min(policy.maxSeconds, SQS_MAX_DELAY_SECONDS, policy.baseSeconds * 2 ** Math.min(30, Math.max(0, attempt - 1)))),
  );
  return Math.min(ceiling, Math.max(1, Math.ceil(ceiling / 2 + (random() * ceiling) / 2)));
}

/** Whether a job whose first start call was at `firstStartAt` may still be retried at `now` (epoch ms). */
export function withinRetryBudget(firstStartAt: number, now: number, policy: BackoffPolicy): boolean {
  return now - firstStartAt < policy.retryForSeconds * 1000;
}
