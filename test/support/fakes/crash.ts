/** Thrown by a port wrapped with `crashable` once the switch has fired: the process "died" at that call. */
export class SimulatedCrash extends Error {
  constructor(readonly at: string) {
    super(`simulated crash at ${at}`);
    this.name = 'SimulatedCrash';
  }
}

/**
 * Simulates a function dying part way: armed with `n`, it lets the next n port calls through and then makes every
 * later call throw SimulatedCrash (a dead process makes no more calls, even if the code catches the first error)
 * until it is reset. The last call let through has its full effect: that is "died right after call n returned",
 * which also covers "died during call n, after the write took effect".
 */
export class CrashSwitch {
  private remaining: number | undefined;
  /** where it fired, if it did since the last reset */
  firedAt: string | undefined;
  callsSeen = 0;

  arm(afterCalls: number): void {
    this.remaining = afterCalls;
    this.firedAt = undefined;
  }

  reset(): void {
    this.remaining = undefined;
    this.firedAt = undefined;
  }

  get fired(): boolean {
    return this.firedAt !== undefined;
  }

  check(what: string): void {
    this.callsSeen++;
    if (this.firedAt !== undefined) throw new SimulatedCrash(what);
    if (this.remaining === undefined) return;
    if (this.remaining === 0) {
      this.firedAt = what;
      throw new SimulatedCrash(what);
    }
    this.remaining--;
  }
}

/** Wraps every method of `target` so each call first asks the switch (fields such as `kind` pass through). */
export function crashable<T extends object>(target: T, crash: CrashSwitch, name: string): T {
  return new Proxy(target, {
    get(obj, prop, receiver) {
      const value = Reflect.get(obj, prop, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        crash.check(`${name}.${String(prop)}`);
        return (value as (...a: unknown[]) => unknown).apply(obj, args);
      };
    },
  });
}
