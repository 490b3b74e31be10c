/**
 * A value read at most once per `maxAgeMs` however many ask for it: a value younger than that (counted from when its
 * read began) is served as it is, and askers that come while a read is under way share it. After `invalidate()` (a
 * change made through the dashboard) the next asker gets a read that began after it. A failed read is not kept: the next
 * asker reads again.
 */
export class ReadAtMostEvery<T> {
  private kept: { since: number; value: T } | undefined;
  private reading: { generation: number; value: Promise<T> } | undefined;
  private generation = 0;
  private reads = 0;

  constructor(
    private readonly read: () => Promise<T>,
    private readonly maxAgeMs: number,
    private readonly now: () => number,
  ) {}

  get(): Promise<T> {
    const now = this.now();
    if (this.kept && now - this.kept.since < this.maxAgeMs) return Promise.resolve(this.kept.value);
    if (this.reading?.generation === this.generation) return this.reading.value;
    const generation = this.generation;
    this.reads++;
    const value = this.read().then((result) => {
      if (generation === this.generation) this.kept = { since: now, value: result };
      return result;
    });
    const reading = { generation, value };
    this.reading = reading;
    const done = () => {
      if (this.reading === reading) this.reading = undefined;
    };
    value.then(done, done);
    return value;
  }

  /** The next get reads anew (a read under way now is not shared with it). */
  invalidate(): void {
    this.generation++;
    this.kept = undefined;
  }

  /** How many reads it began. */
  get readCount(): number {
    return this.reads;
  }
}
