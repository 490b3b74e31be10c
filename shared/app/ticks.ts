import { book } from '../domain/rate';
import { tickBody } from '../domain/tick';
import type { SluiceDeps } from './deps';

/** SQS delays a message by 900 s at most: a later tick is sent at 900 s and, finding nothing to book, sends itself again. */
const MAX_DELAY_SECONDS = 900;

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
  await deps.queue.send(tickBody(gate), Math.min(MAX_DELAY_SECONDS, Math.ceil(Math.max(0, at - now) / 1000)));
}
