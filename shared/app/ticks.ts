import { delaySecondsUntil } from '../domain/backoff';
import { book } from '../domain/rate';
import { tickBody } from '../domain/tick';
import type { SluiceDeps } from './deps';

/**
 * Makes sure a tick will let in the jobs waiting for `gate`'s start rate: one delayed message, sent by whoever the
 * counter elects for the time the next start can be booked (claimTick), so a thousand waiting jobs cost one message.
 */
export async function ensureTick(deps: Pick<SluiceDeps, 'leases' | 'queue' | 'clock'>, gate: string): Promise<void> {
  const now = deps.clock.now();
  const counter = await deps.leases.getPool(gate);
  if (!counter?.rate) return;
  const booking = book(counter.rate, now);
  const at = 'retryAt' in booking ? booking.retryAt : now;
  if (!(await deps.leases.claimTick(gate, at, now))) return;
  // A tick due past SQS's longest delay comes at that delay and, finding nothing to book, elects the next one.
  await deps.queue.send(tickBody(gate), delaySecondsUntil(at, now));
}
