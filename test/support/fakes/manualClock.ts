import type { Clock, Random } from '../../../shared/ports/clock';

/** 2026-01-01T00:00:00Z: a fixed, readable start for every test clock. */
export const T0 = Date.UTC(2026, 0, 1);

/** A clock that moves only when the test says so. */
export class ManualClock implements Clock {
  constructor(private current = T0) {}

  now(): number {
    return this.current;
  }

  advance(ms: number): number {
    if (ms < 0) throw new Error(`a clock only moves forward (asked to advance ${ms} ms)`);
    this.current += ms;
    return this.current;
  }

  /** Sleeping moves the clock: time passes for the sleeper (and for everyone sharing the clock). */
  async sleepUntil(at: number): Promise<void> {
    this.advanceTo(at);
  }

  /** Moves to `at` if that is later than now; never moves back. */
  advanceTo(at: number): number {
    if (at > this.current) this.current = at;
    return this.current;
  }
}

/** mulberry32: a small, fast, seeded generator of numbers in [0, 1). Same seed, same sequence. */
export function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A "random" that always returns the same value, for tests that need an exact delay. */
export const constantRandom =
  (value: number): Random =>
  () =>
    value;
