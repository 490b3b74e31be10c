/** Exponential backoff with full jitter (AWS Architecture Blog, "Exponential Backoff And Jitter"). */
export interface BackoffPolicy {
  baseSeconds: number;
  maxSeconds: number;
  maxAttempts: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = { baseSeconds: 2, maxSeconds: 900, maxAttempts: 8 };

/** SQS caps DelaySeconds at 900 (15 minutes). */
export const SQS_MAX_DELAY_SECONDS = 900;

/**
 * Seconds to wait before retry number `attempt` (1 for the first retry). `random` returns [0, 1).
 * At least 1 second so a retry never spins.
 */
export function retryDelaySeconds(attempt: number, policy: BackoffPolicy, random: () => number): number {
  // Whole seconds: SQS takes an integer DelaySeconds.
  const ceiling = Math.max(
    1,
    Math.floor(Math.min(policy.maxSeconds, SQS_MAX_DELAY_SECONDS, policy.baseSeconds * 2 ** Math.max(0, attempt - 1))),
  );
  return Math.min(ceiling, Math.max(1, Math.ceil(random() * ceiling)));
}

export function hasAttemptsLeft(attempts: number, policy: BackoffPolicy): boolean {
  return attempts < policy.maxAttempts;
}
