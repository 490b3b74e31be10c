import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { LocalStack } from '../../local/stack';
import type { SimRun } from '../../local/simulators';
import { jobIdOfRun } from '../../local/simulators/simulatedKinds';
import { conformanceOf } from '../../shared/kinds/kindConformance';
import { KINDS, kindOf, type JobSpec } from '../../shared/kinds/registry';
import { JobState } from '../../shared/domain/jobState';
import { fullPassesSince, waitForPoolIdle } from './probes';
import { drainQueue, runsPerJob, testClients, waitForJobsDone } from './testStack';
import { waitFor } from './waitFor';

export interface JobItem {
  jobId: string;
  state: string;
  executionId?: string;
  startedAt?: number;
  endedAt?: number;
  attempts?: number;
  lastError?: string;
  heartbeatAt?: number;
  firstStartAt?: number;
  updatedAt: number;
  /** the spec as JSON text */
  spec: string;
}

/** The job's ledger record, read with the test's own client. */
export async function jobRecord(stack: LocalStack, jobId: string): Promise<JobItem | undefined> {
  const { Item } = await testClients(stack).doc.send(
    new GetCommand({ TableName: stack.tableName, Key: { pk: `JOB#${jobId}`, sk: 'JOB' }, ConsistentRead: true }),
  );
  return Item as JobItem | undefined;
}

/** The simulator's runs of these jobs (by what each kind starts a job's run with: a client token, an argument, a name). */
export function runsOf(stack: LocalStack, ids: readonly string[]): Map<string, SimRun[]> {
  const wanted = new Set(ids);
  const out = new Map<string, SimRun[]>();
  for (const run of stack.simulator.runs()) {
    const id = jobIdOfRun(run);
    if (id === undefined || !wanted.has(id)) continue;
    out.set(id, [...(out.get(id) ?? []), run]);
  }
  return out;
}

export interface Workload {
  pool: string;
  limit: number;
  ids: string[];
  /**
   * For the jobs to reach a terminal state (default 60 s): a deadline for a condition, generous so that a loaded machine
   * is slow, not failed.
   */
  timeoutMs?: number;
  /**
   * Jobs whose one run ends `failed` in the ledger instead of `succeeded` (e.g. a run Sluice gave up on at the maximum
   * run time). Everything else is asked of them as of the others: one run, its id in the ledger, not in the DLQ.
   */
  failed?: readonly string[];
  /**
   * When the last slot becomes Sluice's to give back, if later than the last run's end (epoch ms): a run Sluice can only
   * give up on at the maximum run time holds its slot until then. The reconciler frees it in its passes after it.
   */
  idleAfter?: number;
}

/** Kinds with no API to ask about a run (callback jobs): a run whose report is lost ends at its deadline, failed. */
const NO_STATUS_API = new Set<string>(KINDS.filter((k) => conformanceOf(k.kind).statusApi === false).map((k) => k.kind));

/**
 * Jobs of kinds with no status API whose run's report never reached Sluice (the simulator or the bus lost every copy,
 * or every delivery failed): nothing can tell Sluice the run ended, so its deadline ends it, failed. Asked once the
 * bus has nothing in flight.
 */
export async function lostReports(stack: LocalStack, ids: readonly string[]): Promise<string[]> {
  await waitFor('the bus to settle', () => stack.bus.stats().pending === 0, 10_000, 5);
  const runs = runsOf(stack, ids);
  const delivered = new Set(
    stack.bus
      .deliveries()
      .filter((d) => d.ok)
      .map((d) => d.eventId),
  );
  return ids.filter((id) => {
    const run = runs.get(id)?.[0];
    if (!run || !NO_STATUS_API.has(run.kind)) return false;
    return !stack.simulator.emitted().some((e) => e.executionId === run.executionId && delivered.has(e.event.id));
  });
}

/**
 * Jobs of kinds with no status API that their deadline ended before their run's report was taken: failed, as a run
 * whose report is lost. Allowed only when causal: the record says the deadline ended it, no earlier than the deadline
 * its spec and heartbeats give, and no delivery of the run's ending report had been handled before the reconciler
 * ended it (the bus's deliveredAt, once its target, the function's invocation with Lambda's retries, is done; against
 * the record's endedAt; a report handled earlier must win). On a loaded machine a report can queue behind others
 * for longer than a short heartbeat; on AWS, EventBridge retries a failed delivery for up to a day
 * (https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-rule-retry-policy.html).
 */
async function endedBeforeLateReports(stack: LocalStack, ids: readonly string[]): Promise<string[]> {
  const runs = runsOf(stack, ids);
  const handled = new Map<string, number>();
  for (const d of stack.bus.deliveries()) if (d.ok) handled.set(d.eventId, Math.min(handled.get(d.eventId) ?? Infinity, d.deliveredAt));
  const emitted = stack.simulator.emitted();
  const out: string[] = [];
  for (const id of ids) {
    const run = runs.get(id)?.[0];
    if (!run || !NO_STATUS_API.has(run.kind)) continue;
    const record = await jobRecord(stack, id);
    if (record?.state !== JobState.Failed || record.executionId !== run.executionId) continue;
    const spec = JSON.parse(record.spec) as JobSpec;
    const deadline = kindOf(run.kind).runDeadline?.(spec as never, {
      startedAt: record.startedAt ?? record.updatedAt,
      heartbeatAt: record.heartbeatAt,
    });
    if (!deadline || record.lastError !== deadline.reason || (record.endedAt ?? 0) < deadline.at) continue;
    // The run's ending report (the simulator's record of the end events it sent). Handled only after the reconciler
    // ended the job (endedAt: the time of its read, its write fenced by the version read then): a report handled
    // before that would have moved the version and won.
    const report = emitted.filter((e) => e.executionId === run.executionId).at(-1);
    if (report && (handled.get(report.event.id) ?? Infinity) > record.endedAt!) out.push(id);
  }
  return out;
}

/**
 * What Sluice guarantees for a workload, whatever went wrong on the way:
 * - every job ends exactly once: one run per job id at the simulator, the ledger in `succeeded` (or `failed`, for the
 *   jobs listed so, and for jobs with no status API whose report was lost or came after their deadline: see
 *   lostReports, endedBeforeLateReports) with that run's id;
 * - the simulator never had more runs of the pool in progress than its limit;
 * - no slot is held once the reconciler has made its full passes after the last run ended (or, for a run Sluice learnt
 *   of only later, after it recorded the run: the ledger's startedAt; or after `idleAfter`, when given and later): see
 *   waitForPoolIdle (the passes are waited for, not a time);
 * - none of the jobs is in the dead-letter queue.
 */
export async function expectEveryJobRanOnce(
  stack: LocalStack,
  { pool, limit, ids, timeoutMs = 60_000, failed = [], idleAfter }: Workload,
): Promise<void> {
  const states = await waitForJobsDone(stack, ids, timeoutMs);
  const lost = await lostReports(stack, ids);
  const late = await endedBeforeLateReports(stack, ids);
  const failing = new Set([...failed, ...lost, ...late]);
  const expected = Object.fromEntries(ids.map((id) => [id, failing.has(id) ? 'failed' : 'succeeded']));
  // A job in another state than expected is named with its record (its reason, attempts, run) and its runs' ids and
  // times (not their arguments: a callback start carries its token): a rare failure on a loaded machine must say why.
  const astray = ids.filter((id) => states[id] !== expected[id]);
  if (astray.length > 0) {
    const records = await Promise.all(astray.map((id) => jobRecord(stack, id)));
    const runs = runsOf(stack, astray);
    throw new Error(
      `jobs not as expected: ${astray.map((id, i) => `${id}: ${states[id]} (expected ${expected[id]}); record ${JSON.stringify(records[i] ?? null)}; runs ${JSON.stringify((runs.get(id) ?? []).map(({ executionId, startedAt, endedAt }) => ({ executionId, startedAt, endedAt })))}`).join('\n')}`,
    );
  }
  expect(states).toEqual(expected);

  const perJob = runsPerJob(stack);
  expect(Object.fromEntries(ids.map((id) => [id, perJob.get(id) ?? 0]))).toEqual(Object.fromEntries(ids.map((id) => [id, 1])));
  const runs = runsOf(stack, ids);
  const records = await Promise.all(ids.map((id) => jobRecord(stack, id)));
  expect(records.map((r) => [r?.jobId, r?.executionId])).toEqual(ids.map((id) => [id, runs.get(id)?.[0]?.executionId]));

  expect(stack.simulator.maxObservedConcurrency(pool)).toBeLessThanOrEqual(limit);

  // Succeeded in the ledger means the run ended (its event or the job API said so).
  const ends = ids.map((id) => runs.get(id)![0]!.endedAt);
  expect(ends.every((t) => t !== undefined)).toBe(true);
  // A run whose report was lost holds its slot until its deadline: the reconciler ended its job then (endedAt).
  const deadlineEnds = records.filter((r) => r && (lost.includes(r.jobId) || late.includes(r.jobId))).map((r) => r!.endedAt ?? 0);
  const settledAt = Math.max(...(ends as number[]), ...records.map((r) => r?.startedAt ?? 0), ...deadlineEnds);
  await waitForPoolIdle(stack, pool, Math.max(settledAt, idleAfter ?? 0));

  expect(await deadLettered(stack, ids)).toEqual([]);
}

/**
 * Jobs whose runs' completions never reached Sluice (lost events) are ended by the reconciler: no full reconciler pass
 * that began after a job's run had ended, and after the holders index could list its slot (the stack's indexLagMs after
 * the job started, its slot taken before), with the job recorded running when it began (watchStatesBeforePasses, called
 * before the jobs are sent), ended before the job did (the ledger's endedAt, written by the pass that ended it). On AWS:
 * within one reconcile period of the run's end, or of the index listing the slot if later. Causal, not timed. Kinds
 * with a status API only; a run of the others (callback jobs) ends at its deadline (see lostReports).
 */
export async function expectEndedByFirstPassAfterRun(stack: LocalStack, ids: readonly string[]): Promise<void> {
  const runs = runsOf(stack, ids);
  const late: string[] = [];
  for (const id of ids) {
    const run = runs.get(id)?.[0];
    if (!run || NO_STATUS_API.has(run.kind)) continue;
    const record = await jobRecord(stack, id);
    const missed = fullPassesSince(stack, Math.max(run.endedAt ?? Infinity, (record?.startedAt ?? 0) + stack.indexLagMs)).filter(
      (pass) => pass.statesBefore?.[id] === 'running' && (record?.endedAt === undefined || pass.endedAt < record.endedAt),
    );
    if (missed.length > 0)
      late.push(
        `${id}: its run ended at ${run.endedAt} and the job at ${record?.endedAt}; ${missed.length} full pass(es) found it ` +
          `running after its run ended and left it so (first ${JSON.stringify({ ...missed[0], statesBefore: undefined })})`,
      );
  }
  expect(late).toEqual([]);
}

/** Dead-lettered messages about these jobs (by the `sluice-jobId` attribute or the id in the body). Drains the DLQ. */
export async function deadLettered(stack: LocalStack, ids: readonly string[]): Promise<Array<{ jobId: string; reason: string }>> {
  const wanted = new Set(ids);
  const out: Array<{ jobId: string; reason: string }> = [];
  for (const message of await drainQueue(stack, stack.deadLetterUrl)) {
    let jobId = message.attributes['sluice-jobId'];
    if (jobId === undefined) {
      try {
        jobId = (JSON.parse(message.body) as { id?: string }).id;
      } catch {
        continue;
      }
    }
    if (jobId !== undefined && wanted.has(jobId))
      out.push({ jobId, reason: message.attributes['sluice-reason'] ?? '(no reason: redriven by SQS)' });
  }
  return out;
}

/** Waits until the simulator has `count` runs of `group` in progress at once, now. */
export async function waitForRunning(stack: LocalStack, group: string, count: number, timeoutMs = 10_000): Promise<SimRun[]> {
  return waitFor(
    `${count} runs of ${group} in progress`,
    () => {
      const running = stack.simulator.runs().filter((r) => r.group === group && r.endedAt === undefined);
      return running.length === count ? running : undefined;
    },
    timeoutMs,
    10,
  );
}
