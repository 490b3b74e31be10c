/** Time and chance are injected so the domain stays pure and testable. */
export interface Clock {
  /** epoch milliseconds */
  now(): number;
  /** Resolves once `now()` has reached `at` (at once if it has): a job waits for the start time its rate booked. */
  sleepUntil(at: number): Promise<void>;
}

/** Returns a number in [0, 1). */
export type Random = () => number;

export const systemClock: Clock = {
  now: () => Date.now(),
  sleepUntil: (at) => new Promise((resolve) => setTimeout(resolve, Math.max(0, at - Date.now()))),
};
export const systemRandom: Random = () => Math.random();
