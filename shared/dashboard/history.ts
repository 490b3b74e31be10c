/** Runs in progress per pool over the last hour, sampled while the dashboard runs (it keeps no other store). */
export interface Sample {
  at: number;
  inUse: Record<string, number>;
}

export const HISTORY_MS = 60 * 60 * 1000;

export class InUseHistory {
  private readonly samples: Sample[] = [];

  add(at: number, inUse: Record<string, number>): void {
    this.samples.push({ at, inUse });
    while (this.samples.length > 0 && this.samples[0]!.at < at - HISTORY_MS) this.samples.shift();
  }

  /** The samples of the last hour, oldest first. */
  series(): Sample[] {
    return [...this.samples];
  }
}
