/**
 * Protocol row `foundRun` (shared/domain/protocol.ts): a run of a job given up with its slot kept turns out to exist:
 * its id is recorded, so its end frees the slot.
 */
import { JobState } from '../../domain/jobState';
import { PROTOCOL } from '../../domain/protocol';
import { type Acquiring, MAX_ROUNDS } from './context';

/**
 * The record moved on while the start call was made: its completion came first (then nothing is left to do), or the
 * job was given up keeping its slot for a run of unknown outcome: that run is this one, so its id is recorded and its
 * end gives the slot back (protocol step foundRun).
 */
export async function recordLate(acq: Acquiring, jobId: string, executionId: string, now: number): Promise<void> {
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const record = await acq.deps.ledger.get(jobId);
    if (!record || record.state !== JobState.Dead || !record.lease || record.executionId) return;
    const move = { jobId, version: record.version, to: PROTOCOL.foundRun.to, patch: { executionId, startedAt: now } };
    if (await acq.deps.ledger.move(move, now)) return;
  }
}
