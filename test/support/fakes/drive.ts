import { AcquireResult } from '../../../shared/app/acquireJob';
import type { FakeWorld } from './makeDeps';
import { glueJob, messageOf } from './jobs';
import type { SentMessage } from './recordingJobQueue';

export interface Delivered {
  message: SentMessage;
  result: AcquireResult;
}

/**
 * Delivers every message the services sent (and those that sending them causes), oldest first, to the acquirer, the
 * way the SQS event source would: the clock is moved to the end of each message's delay first. Returns what happened.
 */
export async function deliverSent(world: FakeWorld, options: { maxMessages?: number } = {}): Promise<Delivered[]> {
  const limit = options.maxMessages ?? 1_000;
  const delivered: Delivered[] = [];
  const backlog: Array<SentMessage & { availableAt: number }> = [];
  for (;;) {
    for (const message of world.queue.takeSent())
      backlog.push({ ...message, availableAt: (message.sentAt ?? world.clock.now()) + message.delaySeconds * 1000 });
    if (backlog.length === 0) return delivered;
    if (delivered.length >= limit) throw new Error(`more than ${limit} messages: is something looping?`);
    backlog.sort((a, b) => a.availableAt - b.availableAt);
    const next = backlog.shift()!;
    world.clock.advanceTo(next.availableAt);
    const result = await world.acquirer.process({ messageId: next.messageId, body: next.body, reservedHint: next.reserved });
    delivered.push({ message: next, result });
  }
}

/** Delivers one message (and nothing it causes) to the acquirer. */
export function deliver(world: FakeWorld, message: SentMessage): Promise<AcquireResult> {
  return world.acquirer.process({ messageId: message.messageId, body: message.body, reservedHint: message.reserved });
}

/** Delivers a Glue job that must start at once; returns its execution id. */
export async function startGlueJob(world: FakeWorld, id: string, pool = 'default'): Promise<string> {
  const result = await world.acquirer.process(messageOf(glueJob(id, pool)));
  if (result !== AcquireResult.Started) throw new Error(`job ${id} was expected to start, but: ${result}`);
  return world.ledger.peek(id)!.executionId!;
}

/** Delivers a Glue job that must wait (its pool is full). */
export async function parkGlueJob(world: FakeWorld, id: string, pool = 'default'): Promise<void> {
  const result = await world.acquirer.process(messageOf(glueJob(id, pool)));
  if (result !== AcquireResult.Waiting) throw new Error(`job ${id} was expected to wait, but: ${result}`);
}
