/** Time and chance are injected so the domain stays pure and testable. */
export interface Clock {
  /** epoch milliseconds */
  now(): number;
}

/** Returns a number in [0, 1). */
export type Random = () => number;

export const systemClock: Clock = { now: () => Date.now() };
export const systemRandom: Random = () => Math.random();
