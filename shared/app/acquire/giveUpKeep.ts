/**
 * Protocol row `giveUpKeep` (shared/domain/protocol.ts): a job given up while a run it may have started could still be
 * going keeps its slot until that run ended or leaseUntil; then its DLQ copy (row `deadLettered`, ./deadLetter.ts).
 */
import { keptSlotUntil } from '../../domain/decisions';
import { JobState } from '../../domain/jobState';
import { kindOf } from '../../kinds/registry';
import type { JobRecord, Move, RecordPatch } from '../../ports/jobLedger';
import type { Acquiring } from './context';
import { sendToDlq } from './deadLetter';
import { duplicate } from './duplicate';
import type { AcquireResult } from './result';
import { wroteItself } from './wroteItself';

/**
 * A job given up while a run it may have started could still be going keeps its slot (protocol step giveUpKeep) until
 * `leaseUntil`: the longest that run may go, its own deadline when it has one (a callback job's timeout), else its
 * kind's maximum run time. A kind that knows the run's id before the start (a callback job's) has that run
 * recorded with the step, and its run reference written after the DLQ send, so the run's own report (a completion of
 * that run id) gives the slot back at once (giveBack). A crash before the reference leaves the slot to leaseUntil.
 */
export async function giveUpKeep(
  acq: Acquiring,
  record: JobRecord,
  move: (patch: RecordPatch) => Move,
  reason: string,
): Promise<AcquireResult> {
  const { spec } = record;
  const { ledger, clock, settings, log } = acq.deps;
  const runId = await runIdBeforeStart(acq, record);
  const now = clock.now();
  // Its heartbeats are not recorded once it is dead (the heartbeat step needs a running job): only its timeout bounds it.
  const deadline = kindOf(spec.kind).runDeadline?.(spec, { startedAt: now, heartbeatAt: Number.POSITIVE_INFINITY });
  const leaseUntil = keptSlotUntil(now, settings.maxRunMs[spec.kind], deadline);
  const run = runId === undefined ? {} : { executionId: runId, startedAt: now };
  const keep = move({ lastError: reason, leaseUntil, ...run });
  if (!(await ledger.move(keep, now)) && !(await wroteItself(acq, record, keep)))
    return duplicate(acq, record, 'moved on while its start failed');
  log.warn('job given up; its slot is kept while a run it may have started could still be going', {
    jobId: spec.id,
    pool: spec.pool,
    kind: spec.kind,
    leaseUntil,
    ...(runId !== undefined && { executionId: runId }),
  });
  const result = await sendToDlq(acq, { ...record, state: JobState.Dead, version: record.version + 1 }, reason);
  if (runId !== undefined) {
    // Its report may have come already (noted on the run's key): it gives the slot back now, as it would have.
    const early = await ledger.recordRun({ kind: spec.kind, executionId: runId, jobId: spec.id, pool: spec.pool }, clock.now());
    if (early) await acq.completeRun.complete(early);
  }
  return result;
}

/** The run id a start of this job returns, for a kind that knows it beforehand (JobStarter.runIdOf); undefined if not. */
async function runIdBeforeStart(acq: Acquiring, record: JobRecord): Promise<string | undefined> {
  const { spec } = record;
  const starter = acq.deps.starters[spec.kind];
  if (!starter.runIdOf) return undefined;
  try {
    // As its start calls were given it (./start.ts).
    return await starter.runIdOf(spec, { ...(record.firstStartAt !== undefined && { runSince: record.firstStartAt }) });
  } catch (error) {
    // (A callback job's token secret unreadable.) The slot is then kept until leaseUntil, as for a run id unknown.
    acq.deps.log.warn('run id of a job given up could not be made: its slot is kept until leaseUntil', {
      jobId: spec.id,
      pool: spec.pool,
      kind: spec.kind,
      error: String(error),
    });
    return undefined;
  }
}
