import { randomUUID } from 'node:crypto';
import type { EventBridgeEvent } from 'aws-lambda';
import { assertValidPattern, matchesPattern, type EventPattern } from './eventPattern';

/** An event as a rule's target receives it (the EventBridge envelope). */
export type BusEvent = EventBridgeEvent<string, unknown>;

/** What a caller puts, like a PutEvents entry; the bus fills in the rest of the envelope. */
export interface BusEventInput {
  source: string;
  'detail-type': string;
  detail: unknown;
  resources?: string[];
  /** ISO time; defaults to now() at second precision, as EventBridge writes it. */
  time?: string;
  /** Defaults to a random UUID. Pass one to mimic an AWS service event. */
  id?: string;
  account?: string;
  region?: string;
}

export interface BusRule {
  name: string;
  pattern: EventPattern;
  target: (event: BusEvent) => Promise<unknown>;
}

/** One delivery of one event to one rule's target, after its last attempt. */
export interface DeliveryRecord {
  rule: string;
  eventId: string;
  putAt: number;
  /** Start of the first attempt: `firstAttemptAt - putAt` is the bus's latency. Absent if no attempt ran. */
  firstAttemptAt?: number;
  deliveredAt: number;
  attempts: number;
  ok: boolean;
  error?: string;
}

/** Passed to `onDeliver` as each attempt starts. */
export interface DeliveryAttempt {
  rule: string;
  event: BusEvent;
  putAt: number;
  startedAt: number;
  attempt: number;
}

export interface BusFaults {
  /** Lose the next n events entirely (EventBridge lists AppFlow and Glue events as best effort). */
  dropNext?: number;
  /** Deliver the next n events twice, same id (delivery is at least once). */
  duplicateNext?: number;
  /** Only events of these sources count for dropNext and duplicateNext (all when absent): aim at the services' events. */
  sources?: readonly string[];
}

export interface BusStats {
  put: number;
  dropped: number;
  duplicated: number;
  attempts: number;
  retries: number;
  succeeded: number;
  failed: number;
  /** Deliveries waiting to start, waiting for a retry, or running. */
  pending: number;
}

export interface LocalEventBusOptions {
  /** Attempts per delivery of a target that rejects, the first included (EventBridge: up to 185 over 24 h). Default 5. */
  maxAttempts?: number;
  /** Backoff before attempt n+1 is baseDelayMs * 2^(n-1), with jitter. Default 50 ms. */
  baseDelayMs?: number;
  /** Clock for timestamps (put, attempts, records, default event time). Default Date.now. */
  now?: () => number;
  account?: string;
  region?: string;
  /** Oldest delivery records are dropped beyond this. Default 10,000. */
  maxRecords?: number;
  onDeliver?: (attempt: DeliveryAttempt) => void;
}

/**
 * An in-process EventBridge bus: rules with patterns, asynchronous delivery, retries with backoff, fault injection.
 *
 * Two retries are different things on AWS. EventBridge retries a delivery only when the target could not be invoked
 * (unavailable, throttled, network), for 24 hours and up to 185 times
 * (https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-rule-retry-policy.html). A Lambda target is invoked
 * asynchronously: Lambda accepts the event (202) and a function error is Lambda's to retry, by the function's own
 * asynchronous configuration (https://docs.aws.amazon.com/lambda/latest/dg/invocation-async.html). The local stack's
 * rules target its Lambda model (local/lambda), which always accepts, so this bus's retries never come into play
 * for Sluice's functions: a target that rejects here is a test's own, retried `maxAttempts` times with a short backoff.
 * EventBridge's day of retries is not modelled: no local target can be unavailable for longer than a test runs.
 */
export class LocalEventBus {
  private readonly rules = new Map<string, BusRule>();
  private readonly records: DeliveryRecord[] = [];
  private readonly waits = new Map<NodeJS.Timeout, (proceed: boolean) => void>();
  private readonly inFlight = new Set<Promise<void>>();
  private drainWaiters: Array<() => void> = [];
  private faults: { dropNext: number; duplicateNext: number; sources?: readonly string[] } = { dropNext: 0, duplicateNext: 0 };
  private closed = false;
  private readonly counts: Omit<BusStats, 'pending'> = {
    put: 0,
    dropped: 0,
    duplicated: 0,
    attempts: 0,
    retries: 0,
    succeeded: 0,
    failed: 0,
  };
  private pending = 0;
  private readonly maxAttempts: number;
  private readonly baseDelayMs: number;
  private readonly now: () => number;

  constructor(private readonly options: LocalEventBusOptions = {}) {
    this.maxAttempts = Math.max(1, options.maxAttempts ?? 5);
    this.baseDelayMs = options.baseDelayMs ?? 50;
    this.now = options.now ?? Date.now;
  }

  addRule(rule: BusRule): void {
    if (this.rules.has(rule.name)) throw new Error(`rule ${rule.name} already exists`);
    assertValidPattern(rule.pattern); // fail at setup, as PutRule does, not silently at delivery
    this.rules.set(rule.name, rule);
  }

  removeRule(name: string): void {
    this.rules.delete(name);
  }

  /** Like PutEvents: matches rules now, returns the full event at once, delivers asynchronously. */
  put(input: BusEventInput): BusEvent {
    if (this.closed) throw new Error('the bus is closed');
    const putAt = this.now();
    const event: BusEvent = structuredClone({
      version: '0',
      id: input.id ?? randomUUID(),
      'detail-type': input['detail-type'],
      source: input.source,
      account: input.account ?? this.options.account ?? '000000000000',
      time: input.time ?? new Date(putAt).toISOString().replace(/\.\d{3}Z$/, 'Z'),
      region: input.region ?? this.options.region ?? 'us-east-1',
      resources: input.resources ?? [],
      detail: input.detail,
    });
    this.counts.put++;
    const aimed = this.faults.sources === undefined || this.faults.sources.includes(event.source);
    if (aimed && this.faults.dropNext > 0) {
      this.faults.dropNext--;
      this.counts.dropped++;
      return event;
    }
    let copies = 1;
    if (aimed && this.faults.duplicateNext > 0) {
      this.faults.duplicateNext--;
      this.counts.duplicated++;
      copies = 2;
    }
    for (const rule of this.rules.values()) {
      if (!matchesPattern(rule.pattern, event)) continue;
      for (let i = 0; i < copies; i++) this.track(this.deliver(rule, event, putAt));
    }
    return event;
  }

  setFaults(faults: BusFaults): void {
    this.faults = { dropNext: faults.dropNext ?? 0, duplicateNext: faults.duplicateNext ?? 0, sources: faults.sources };
  }

  deliveries(): readonly DeliveryRecord[] {
    return this.records;
  }

  stats(): BusStats {
    return { ...this.counts, pending: this.pending };
  }

  /** Resolves when no delivery is waiting or running, including deliveries of events that targets put. */
  drain(): Promise<void> {
    if (this.pending === 0) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  /** Refuses new events, abandons deliveries that wait (recorded as failed), and waits for running targets. */
  async close(): Promise<void> {
    this.closed = true;
    for (const [timer, proceed] of this.waits) {
      clearTimeout(timer);
      proceed(false);
    }
    this.waits.clear();
    await Promise.all(this.inFlight);
  }

  private track(delivery: Promise<void>): void {
    this.pending++;
    this.inFlight.add(delivery);
    void delivery.finally(() => {
      this.inFlight.delete(delivery);
      if (--this.pending === 0) {
        const waiters = this.drainWaiters;
        this.drainWaiters = [];
        waiters.forEach((resolve) => resolve());
      }
    });
  }

  private async deliver(rule: BusRule, event: BusEvent, putAt: number): Promise<void> {
    let firstAttemptAt: number | undefined;
    let attempts = 0;
    let error: unknown;
    while (attempts < this.maxAttempts) {
      // The first attempt waits too (0 ms) so that delivery never runs inside put().
      if (!(await this.wait(attempts === 0 ? 0 : this.backoffMs(attempts)))) {
        error = new Error(
          attempts === 0 ? 'the bus closed before delivery' : `the bus closed before a retry; last error: ${describe(error)}`,
        );
        break;
      }
      attempts++;
      const startedAt = this.now();
      firstAttemptAt ??= startedAt;
      this.counts.attempts++;
      if (attempts > 1) this.counts.retries++;
      try {
        this.options.onDeliver?.({ rule: rule.name, event, putAt, startedAt, attempt: attempts });
      } catch {
        // a broken measuring hook must not change delivery
      }
      try {
        await rule.target(structuredClone(event)); // each target gets its own copy, as each gets its own JSON on AWS
        this.counts.succeeded++;
        this.record({ rule: rule.name, eventId: event.id, putAt, firstAttemptAt, deliveredAt: this.now(), attempts, ok: true });
        return;
      } catch (err) {
        error = err;
      }
    }
    this.counts.failed++;
    this.record({
      rule: rule.name,
      eventId: event.id,
      putAt,
      ...(firstAttemptAt !== undefined && { firstAttemptAt }),
      deliveredAt: this.now(),
      attempts,
      ok: false,
      error: describe(error),
    });
  }

  /** Exponential backoff with jitter in [50%, 100%], as AWS retries do. */
  private backoffMs(retry: number): number {
    return this.baseDelayMs * 2 ** (retry - 1) * (0.5 + Math.random() / 2);
  }

  /** Resolves true after ms, or false if the bus closes first. */
  private wait(ms: number): Promise<boolean> {
    if (this.closed) return Promise.resolve(false);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waits.delete(timer);
        resolve(true);
      }, ms);
      this.waits.set(timer, resolve);
    });
  }

  private record(entry: DeliveryRecord): void {
    this.records.push(entry);
    if (this.records.length > (this.options.maxRecords ?? 10_000)) this.records.shift();
  }
}

const describe = (error: unknown) => (error instanceof Error ? error.message : String(error));
