import type { JobQueue } from '../../../shared/ports/jobQueue';
import type { Clock } from '../../../shared/ports/clock';
import { tick } from './tick';

export interface SentMessage {
  /** a fake SQS message id, unique per send */
  messageId: string;
  body: string;
  delaySeconds: number;
  /** sent with a slot already reserved for the job (a hand-off) */
  reserved: boolean;
  /** the clock's time at the send, when the queue has a clock: its delay counts from then */
  sentAt?: number;
}

export interface DeadLetter {
  body: string;
  reason: string;
  context: Record<string, string>;
}

/**
 * JobQueue that records what was sent (with its delay) and what was dead-lettered (with why). `sent` and `deadLettered`
 * keep everything; `takeSent()` hands the messages not taken yet to a test that delivers them to the acquirer.
 */
export class RecordingJobQueue implements JobQueue {
  constructor(private readonly clock?: Pick<Clock, 'now'>) {}

  readonly sent: SentMessage[] = [];
  readonly deadLettered: DeadLetter[] = [];
  private pending: SentMessage[] = [];
  private counter = 0;
  private failures: Error[] = [];

  async send(body: string, delaySeconds = 0, options: { reserved?: boolean } = {}): Promise<void> {
    await tick();
    const failure = this.failures.shift();
    if (failure) throw failure;
    if (!Number.isInteger(delaySeconds) || delaySeconds < 0 || delaySeconds > 900) {
      // The SQS API declares DelaySeconds an Integer from 0 to 900 (the exact error SQS returns is unverified).
      throw new Error(`InvalidParameterValue: DelaySeconds must be a whole number from 0 to 900, got ${delaySeconds}`);
    }
    const message: SentMessage = {
      messageId: `msg-${++this.counter}`,
      body,
      delaySeconds,
      reserved: options.reserved ?? false,
      ...(this.clock && { sentAt: this.clock.now() }),
    };
    this.sent.push(message);
    this.pending.push(message);
  }

  async sendAll(bodies: readonly string[]): Promise<void> {
    for (const body of bodies) await this.send(body);
  }

  async deadLetter(body: string, reason: string, context: Record<string, string> = {}): Promise<void> {
    await tick();
    this.deadLettered.push({ body, reason, context: { ...context } });
  }

  /** The messages sent since the last call, oldest first; they are no longer pending afterwards. */
  takeSent(): SentMessage[] {
    const taken = this.pending;
    this.pending = [];
    return taken;
  }

  /** Number of sent messages not taken yet. */
  get pendingCount(): number {
    return this.pending.length;
  }

  /** Makes the next `send` calls throw these errors, in order. */
  failNextSends(...errors: Error[]): void {
    this.failures.push(...errors);
  }

  /** Bodies sent for one job (parsed ids), in order. */
  sentFor(jobId: string): SentMessage[] {
    return this.sent.filter((m) => idOf(m.body) === jobId);
  }

  deadLettersFor(jobId: string): DeadLetter[] {
    return this.deadLettered.filter((d) => d.context.jobId === jobId || idOf(d.body) === jobId);
  }
}

function idOf(body: string): string | undefined {
  try {
    const parsed = JSON.parse(body) as { id?: unknown };
    return typeof parsed?.id === 'string' ? parsed.id : undefined;
  } catch {
    return undefined;
  }
}
