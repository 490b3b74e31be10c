import type { EventPublisher } from '../../../shared/ports/eventPublisher';
import type { SetRun, SetRunStore, SetRunSummary } from '../../../shared/ports/setRunStore';

const key = (set: string, run: string) => `${set}#${run}`;

/** The SetRunStore port in memory (test/contract/setRunStore.contract.ts holds it to the DynamoDB adapter's behaviour). */
export class InMemorySetRuns implements SetRunStore {
  private readonly runsByKey = new Map<string, SetRun>();
  private readonly open = new Set<string>();
  private readonly paused = new Set<string>();

  async startRun(run: Omit<SetRun, 'ended' | 'completedAt' | 'summary' | 'checkedAt' | 'notifiedAt'>): Promise<boolean> {
    const k = key(run.set, run.run);
    if (this.runsByKey.has(k)) return false;
    this.runsByKey.set(k, structuredClone({ ...run, ended: 0 }));
    this.open.add(k);
    return true;
  }

  async countEnded(set: string, run: string): Promise<SetRun | undefined> {
    const stored = this.runsByKey.get(key(set, run));
    if (!stored) return undefined;
    stored.ended++;
    return structuredClone(stored);
  }

  async markChecked(set: string, run: string, at: number): Promise<void> {
    const stored = this.runsByKey.get(key(set, run));
    if (stored) stored.checkedAt = at;
  }

  async complete(set: string, run: string, summary: SetRunSummary, at: number): Promise<boolean> {
    const stored = this.runsByKey.get(key(set, run));
    if (!stored || stored.completedAt !== undefined) return false;
    Object.assign(stored, { completedAt: at, summary: structuredClone(summary) });
    return true;
  }

  async markNotified(set: string, run: string, at: number): Promise<void> {
    const stored = this.runsByKey.get(key(set, run));
    if (stored) stored.notifiedAt = at;
    this.open.delete(key(set, run));
  }

  async getRun(set: string, run: string): Promise<SetRun | undefined> {
    const stored = this.runsByKey.get(key(set, run));
    return stored && structuredClone(stored);
  }

  async runs(set: string, max: number): Promise<SetRun[]> {
    return [...this.runsByKey.values()]
      .filter((run) => run.set === set)
      .sort((a, b) => b.startedAt - a.startedAt || b.run.localeCompare(a.run))
      .slice(0, max)
      .map((run) => structuredClone(run));
  }

  async openRuns(max: number): Promise<SetRun[]> {
    return [...this.open].slice(0, max).map((k) => structuredClone(this.runsByKey.get(k)!));
  }

  async setPaused(set: string, paused: boolean): Promise<void> {
    if (paused) this.paused.add(set);
    else this.paused.delete(set);
  }

  async isPaused(set: string): Promise<boolean> {
    return this.paused.has(set);
  }
}

/** Keeps every event published, in order. */
export class RecordingEvents implements EventPublisher {
  readonly published: Array<{ detailType: string; detail: Record<string, unknown> }> = [];

  async publish(detailType: string, detail: Record<string, unknown>): Promise<void> {
    this.published.push({ detailType, detail: structuredClone(detail) });
  }
}
