/** Thrown by a port wrapped with `crashable` once the switch has fired: the process "died" at that call. */
export class SimulatedCrash extends Error {
  constructor(readonly at: string) {
    super(`simulated crash at ${at}`);
    this.name = 'SimulatedCrash';
  }
}

type Trigger =
  | { mode: 'count'; remaining: number }
  | { mode: 'named'; what: string; occurrence: number; when: 'before' | 'after' };

/**
 * Simulates a function dying part way. Once it fires, every later call through a wrapped port throws SimulatedCrash
 * (a dead process makes no more calls, even where the code catches the first error) until `reset()`.
 * - `arm(n)`: the next n calls go through, the one after dies before taking effect. "Died right after call n returned"
 *   also covers "died during call n, after its write took effect".
 * - `armOn('ledger.recordRun', { when: 'after' })`: the process dies when that call (its occurrence-th) is made,
 *   before it takes effect ('before') or after it took effect but before the caller saw the answer ('after').
 */
export class CrashSwitch {
  private trigger: Trigger | undefined;
  /** where it fired, if it did since the last reset */
  firedAt: string | undefined;
  /** every call seen, by name (port.method), since the last reset */
  readonly seen: string[] = [];

  arm(afterCalls: number): void {
    this.reset();
    this.trigger = { mode: 'count', remaining: afterCalls };
  }

  armOn(what: string, options: { occurrence?: number; when?: 'before' | 'after' } = {}): void {
    this.reset();
    this.trigger = { mode: 'named', what, occurrence: options.occurrence ?? 1, when: options.when ?? 'after' };
  }

  reset(): void {
    this.trigger = undefined;
    this.firedAt = undefined;
    this.seen.length = 0;
  }

  get fired(): boolean {
    return this.firedAt !== undefined;
  }

  /** Called before a wrapped call; throws if the process is dead or dies now. Returns true if it must die after it. */
  enter(what: string): boolean {
    if (this.firedAt !== undefined) throw new SimulatedCrash(what);
    this.seen.push(what);
    const trigger = this.trigger;
    if (!trigger) return false;
    if (trigger.mode === 'count') {
      if (trigger.remaining === 0) return this.fire(what);
      trigger.remaining--;
      return false;
    }
    if (trigger.what !== what || --trigger.occurrence > 0) return false;
    if (trigger.when === 'before') return this.fire(what);
    this.firedAt = what;
    return true;
  }

  private fire(what: string): never {
    this.firedAt = what;
    throw new SimulatedCrash(what);
  }
}

/** Wraps every method of `target` so each call goes through the switch (fields such as `kind` pass through). */
export function crashable<T extends object>(target: T, crash: CrashSwitch, name: string): T {
  return new Proxy(target, {
    get(obj, prop, receiver) {
      const value = Reflect.get(obj, prop, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const what = `${name}.${String(prop)}`;
        let dieAfter: boolean;
        try {
          dieAfter = crash.enter(what);
        } catch (error) {
          // Every port method is async: fail the same way, so Promise.all([...]) callers handle every rejection.
          return Promise.reject(error);
        }
        const result = (value as (...a: unknown[]) => unknown).apply(obj, args);
        if (!dieAfter) return result;
        return Promise.resolve(result).then(
          () => Promise.reject(new SimulatedCrash(what)),
          () => Promise.reject(new SimulatedCrash(what)),
        );
      };
    },
  });
}
