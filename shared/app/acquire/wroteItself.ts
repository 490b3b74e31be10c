/**
 * After a failed start's own step (rows `handBack`, `backoff`, `hold`, `giveUp`, `giveUpKeep` of
 * shared/domain/protocol.ts) failed its fence: was the write this attempt's own, its answer lost?
 */
import type { JobRecord, Move } from '../../ports/jobLedger';
import type { Acquiring } from './context';

/**
 * A fenced move that failed may have been this attempt's own: applied, its answer lost, and the SDK's retry of it
 * meeting its effect ("condition failed"; docs/protocol.md, "Answers lost after a write applied"). True if the record
 * now shows exactly that move: one version on, in its target state, with the attempts it wrote, still owned by this
 * attempt (no other writer moves a starting job it does not own to queued, starting or dead).
 */
export async function wroteItself(acq: Acquiring, read: JobRecord, move: Move): Promise<boolean> {
  const now = await acq.deps.ledger.get(read.jobId);
  return (
    now !== undefined &&
    now.version === move.version + 1 &&
    now.state === move.to &&
    now.attempt === read.attempt &&
    now.attempts === move.patch?.attempts
  );
}
