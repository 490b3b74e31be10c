import { randomUUID } from 'node:crypto';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { silentLog } from '../app/deps';
import { JobSetRunner } from '../app/jobSets';
import { DynamoJobLedger } from '../adapters/dynamodb/jobLedger';
import { DynamoSetRunStore } from '../adapters/dynamodb/setRunStore';
import { SqsJobQueue } from '../adapters/sqs/jobQueue';
import { loadJobSets } from '../config/jobSetsFile';
import { jobIdsOfRun, type JobSet, runOfInvocation } from '../domain/jobSets';
import { knownJobs } from '../inspect/jobs';
import { formatKnown } from './format';
import { UnknownJobSetError } from '../errors';
import { systemClock } from '../ports/clock';
import type { SetRun } from '../ports/setRunStore';
import type { Command } from './args';
import { terminalJson } from './terminalText';

/** The sets file the CLI reads: --file, SLUICE_JOB_SETS_FILE, or the one the functions are deployed with by default. */
export const DEFAULT_JOB_SETS_FILE = 'shared/config/jobSets.yml';

type SetsCommand = Extract<Command, { name: 'sets-list' | 'sets-runs' | 'sets-failed' | 'sets-run-now' | 'sets-pause' }>;

export interface SetsTarget {
  doc: DynamoDBDocumentClient;
  sqs: SQSClient;
  table: string;
  queueUrl?: string;
  env: NodeJS.ProcessEnv;
  json: boolean;
}

/** `sluice sets ...`: what it prints. */
export async function runSetsCommand(command: SetsCommand, target: SetsTarget): Promise<string> {
  const store = new DynamoSetRunStore(target.doc, target.table);
  const fileOf = (file?: string) => file ?? target.env.SLUICE_JOB_SETS_FILE ?? DEFAULT_JOB_SETS_FILE;
  const runnerOf = (sets: JobSet[]) =>
    new JobSetRunner(
      {
        ledger: new DynamoJobLedger(target.doc, target.table),
        queue: new SqsJobQueue(target.sqs, target.queueUrl ?? '', ''),
        clock: systemClock,
        log: silentLog,
        sets: { store, events: { publish: async () => undefined } },
      },
      sets,
    );
  switch (command.name) {
    case 'sets-list': {
      const file = fileOf(command.file);
      const rows = await Promise.all(
        loadJobSets(file).map(async (set) => ({
          name: set.name,
          schedule: set.schedule,
          timezone: set.timezone,
          enabled: set.enabled,
          paused: await store.isPaused(set.name),
          jobs: set.jobs.length,
          lastRun: (await store.runs(set.name, 1))[0],
        })),
      );
      if (target.json) return terminalJson(rows, 2);
      if (rows.length === 0) return `${file}: no job sets`;
      return rows
        .map(
          (r) =>
            `${r.name}  ${r.schedule} ${r.timezone}  ${r.jobs} jobs${r.enabled ? '' : '  (disabled)'}${r.paused ? '  PAUSED' : ''}  last run: ${r.lastRun ? describeRun(r.lastRun) : 'none'}`,
        )
        .join('\n');
    }
    case 'sets-runs': {
      const runs = await store.runs(command.set, command.max);
      if (target.json)
        return terminalJson(
          runs.map(({ keys: _keys, ...run }) => run),
          2,
        );
      return runs.length === 0 ? `${command.set}: no runs` : runs.map((run) => describeRun(run)).join('\n');
    }
    case 'sets-failed': {
      // The run's keys (kept on its item even if the set changed since) and its jobs' records: every failed job.
      const run = await store.getRun(command.set, command.run);
      if (!run) throw new UnknownJobSetError(`job set '${command.set}' has no run '${command.run}' (sluice sets runs ${command.set})`);
      const failed = await runnerOf([]).failedJobs(run);
      if (target.json) return terminalJson({ set: run.set, run: run.run, total: run.total, failedIds: failed }, 2);
      return failed.length === 0 ? `${run.set} run ${run.run}: no failed jobs of ${run.total}` : failed.join('\n');
    }
    case 'sets-run-now': {
      const sets = loadJobSets(fileOf(command.file));
      if (!sets.some((s) => s.name === command.set)) throw new UnknownJobSetError(`no job set '${command.set}' in ${fileOf(command.file)}`);
      const runner = runnerOf(sets);
      const invocationId = command.id ?? randomUUID().slice(0, 8);
      // Read before the fire sends them: the ids of this run the ledger knows already run nothing again.
      const known = await knownJobs(
        target.doc,
        target.table,
        jobIdsOfRun(
          sets.find((s) => s.name === command.set)!,
          runOfInvocation(invocationId),
        ),
      );
      const result = await runner.fire({ set: command.set, invocationId });
      if (target.json) return terminalJson({ ...result, known });
      const line = `${command.set}: run ${result.run}, ${result.jobs} jobs ${result.created ? 'enqueued' : 'sent again (the run existed: each job still runs once)'}`;
      const knownLine = formatKnown(known);
      return knownLine ? `${line}\n${knownLine}` : line;
    }
    case 'sets-pause':
      await store.setPaused(command.set, command.paused);
      return target.json
        ? terminalJson({ set: command.set, paused: command.paused })
        : `${command.set}: ${command.paused ? "paused (its schedule's fires are skipped)" : 'resumed'}`;
  }
}

function describeRun(run: SetRun): string {
  const started = new Date(run.startedAt).toISOString().replace('.000', '');
  if (run.summary && run.completedAt !== undefined)
    return `${run.run}  started ${started}  completed in ${Math.round((run.completedAt - run.startedAt) / 1000)} s: ${run.summary.succeeded} succeeded, ${run.summary.failed} failed of ${run.total}`;
  return `${run.run}  started ${started}  ${Math.min(run.ended, run.total)} of ${run.total} jobs ended`;
}
