import { ITEM_TOO_LARGE_MESSAGE, itemSize, MAX_ITEM_BYTES } from '../../../shared/adapters/dynamodb/itemSize';
import { setRunItem } from '../../../shared/adapters/dynamodb/setRunStore';
import { MAX_PUT_EVENTS_ENTRY_BYTES, putEventsEntrySize } from '../../../shared/adapters/eventbridge/entrySize';
import { SLUICE_EVENT_SOURCE, type EventPublisher } from '../../../shared/ports/eventPublisher';
import type { OpenRunCursor, OpenRunPage, SetRun, SetRunStore, SetRunSummary } from '../../../shared/ports/setRunStore';

const key = (set: string, run: string) => `${set}#${run}`;

/** DynamoDB orders string sort keys by their UTF-8 bytes. */
function byteOrder(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/** What DynamoDB answers a write that would make an item larger than 400 KB. */
function refuseTooLarge(run: SetRun, update: boolean): void {
  if (itemSize(setRunItem(run)) <= MAX_ITEM_BYTES) return;
  const error = new Error(update ? ITEM_TOO_LARGE_MESSAGE.replace('Item size', 'Item size to update') : ITEM_TOO_LARGE_MESSAGE);
  error.name = 'ValidationException';
  throw error;
}

/** The SetRunStore port in memory (test/contract/setRunStore.contract.ts holds it to the DynamoDB adapter's behaviour). */
export class InMemorySetRuns implements SetRunStore {
  private readonly runsByKey = new Map<string, SetRun>();
  private readonly open = new Set<string>();
  /** the job whose count was the last on each run (the adapter's lastCounted) */
  private readonly lastCounted = new Map<string, string>();
  private readonly paused = new Set<string>();

  async startRun(
    run: Omit<SetRun, 'ended' | 'countedAt' | 'completedAt' | 'summary' | 'checkedAt' | 'checkedOpen' | 'notifiedAt'>,
  ): Promise<boolean> {
    const k = key(run.set, run.run);
    if (this.runsByKey.has(k)) return false;
    const created = structuredClone({ ...run, ended: 0 });
    refuseTooLarge(created, false); // the size of the item as the DynamoDB adapter writes it
    this.runsByKey.set(k, created);
    this.open.add(k);
    return true;
  }

  async countEnded(set: string, run: string, jobId: string, at: number): Promise<SetRun | undefined> {
    const k = key(set, run);
    const stored = this.runsByKey.get(k);
    if (!stored) return undefined;
    if (this.lastCounted.get(k) !== jobId) {
      stored.ended++;
      stored.countedAt = at;
      this.lastCounted.set(k, jobId);
    }
    return structuredClone(stored);
  }

  async markChecked(set: string, run: string, at: number, open: number): Promise<void> {
    const stored = this.runsByKey.get(key(set, run));
    if (stored) Object.assign(stored, { checkedAt: at, checkedOpen: open });
  }

  async complete(set: string, run: string, summary: SetRunSummary, at: number): Promise<boolean> {
    const stored = this.runsByKey.get(key(set, run));
    if (!stored || stored.completedAt !== undefined) return false;
    refuseTooLarge({ ...stored, completedAt: at, summary }, true);
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

  async openRuns(options: { after?: OpenRunCursor; max?: number } = {}): Promise<OpenRunPage> {
    // As the open list's sort keys (`<set>#<run>`) come back from a Query: in byte order, a page at a time.
    const max = options.max ?? 100;
    const after = options.after && key(options.after.set, options.after.run);
    const keys = [...this.open].filter((k) => after === undefined || byteOrder(k, after) > 0).sort(byteOrder);
    const page = keys.slice(0, max);
    const runs = page.map((k) => structuredClone(this.runsByKey.get(k)!));
    if (keys.length <= max) return { runs };
    const last = runs[runs.length - 1]!;
    return { runs, next: { set: last.set, run: last.run } };
  }

  async setPaused(set: string, paused: boolean): Promise<void> {
    if (paused) this.paused.add(set);
    else this.paused.delete(set);
  }

  async isPaused(set: string): Promise<boolean> {
    return this.paused.has(set);
  }
}

/** Keeps every event published, in order; refuses an entry over PutEvents' 256 KB as EventBridge does. */
export class RecordingEvents implements EventPublisher {
  readonly published: Array<{ detailType: string; detail: Record<string, unknown> }> = [];

  async publish(detailType: string, detail: Record<string, unknown>): Promise<void> {
    const size = putEventsEntrySize({ Source: SLUICE_EVENT_SOURCE, DetailType: detailType, Detail: JSON.stringify(detail) });
    if (size > MAX_PUT_EVENTS_ENTRY_BYTES) {
      const error = new Error(`Total size of the entries in the request is over the limit (an entry of ${size} bytes)`);
      error.name = 'ValidationException';
      throw error;
    }
    this.published.push({ detailType, detail: structuredClone(detail) });
  }
}
