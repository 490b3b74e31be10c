import { type AppflowClient, DescribeFlowExecutionRecordsCommand, type ExecutionRecord, StartFlowCommand } from '@aws-sdk/client-appflow';
import { GetJobRunsCommand, type GlueClient, type JobRun, StartJobRunCommand } from '@aws-sdk/client-glue';
import { AppFlowStarter } from '../../../shared/kinds/appflow/starter';
import { GlueStarter, JOB_ID_ARGUMENT } from '../../../shared/kinds/glue/starter';
import { TransientStartError } from '../../../shared/errors';
import { RunStatus } from '../../../shared/ports/jobStarter';
import type { AppFlowJob, GlueJob } from '../../../shared/kinds/registry';

const T0 = Date.parse('2026-11-22T00:00:00Z');
const MINUTE = 60_000;
const glueJob: GlueJob = { id: 'job-1', pool: 'etl', kind: 'glue', jobName: 'nightly' };
const flowJob: AppFlowJob = { id: 'job-1', pool: 'crm', kind: 'appflow', flowName: 'accounts' };

/** A Glue run of another job, or of ours; `at` is StartedOn in ms. */
const glueRun = (id: string, at: number, jobId = `other-${id}`): JobRun => ({
  Id: id,
  StartedOn: new Date(at),
  Arguments: { [JOB_ID_ARGUMENT]: jobId },
});

/** GetJobRuns over a fixed list (already newest first), offset tokens; counts calls; StartJobRun answers a new id. */
function fakeGlue(runs: JobRun[], fail?: () => Error) {
  const calls = { getJobRuns: 0, startJobRun: 0 };
  const glue = {
    async send(command: unknown) {
      if (command instanceof GetJobRunsCommand) {
        calls.getJobRuns++;
        if (fail) throw fail();
        const from = Number(command.input.NextToken ?? 0);
        const max = command.input.MaxResults ?? 100;
        const next = from + max < runs.length ? { NextToken: String(from + max) } : {};
        return { JobRuns: runs.slice(from, from + max), ...next };
      }
      if (command instanceof StartJobRunCommand) {
        calls.startJobRun++;
        return { JobRunId: 'jr_new' };
      }
      throw new Error(`unexpected ${String(command)}`);
    },
  } as unknown as GlueClient;
  return { glue, calls };
}

/** `count` runs of other jobs, newest first, one a second apart, the newest at `newestAt`. */
const othersBefore = (count: number, newestAt: number, prefix = 'n'): JobRun[] =>
  Array.from({ length: count }, (_, i) => glueRun(`${prefix}${i}`, newestAt - i * 1000));

describe('GlueStarter: finding an earlier run of a job', () => {
  test('finds the run under 700 newer runs of a busy job (it used to stop after 600 and start a second run)', async () => {
    const runs = [...othersBefore(700, T0 + 2 * 3600_000), glueRun('jr_ours', T0, glueJob.id), ...othersBefore(50, T0 - 1000, 'o')];
    const { glue, calls } = fakeGlue(runs);
    await expect(new GlueStarter(glue).start(glueJob, { mayHaveStarted: true })).resolves.toEqual({ executionId: 'jr_ours' });
    expect(calls).toEqual({ getJobRuns: 4, startJobRun: 0 });
  });

  test('with requestedSince, stops at the first page older than the request (less 5 minutes) and then starts', async () => {
    // 500 runs since the request, then 10,000 older ones: the job never started.
    const runs = [...othersBefore(500, T0 + 3600_000), ...othersBefore(10_000, T0 - 6 * MINUTE, 'o')];
    const { glue, calls } = fakeGlue(runs);
    await expect(new GlueStarter(glue).start(glueJob, { mayHaveStarted: true, requestedSince: T0 })).resolves.toEqual({
      executionId: 'jr_new',
    });
    // pages 1-3 hold the 500 newer runs (and 100 older ones), page 4 is all older: 4 pages, not 53.
    expect(calls).toEqual({ getJobRuns: 4, startJobRun: 1 });
  });

  test('a run that Glue dates up to 5 minutes before the request (clock skew) is still found', async () => {
    const runs = [
      ...othersBefore(200, T0 - 1 * MINUTE, 'a'),
      glueRun('jr_ours', T0 - 4.5 * MINUTE, glueJob.id),
      ...othersBefore(500, T0 - 10 * MINUTE, 'o'),
    ];
    const { glue, calls } = fakeGlue(runs);
    await expect(new GlueStarter(glue).start(glueJob, { mayHaveStarted: true, requestedSince: T0 })).resolves.toEqual({
      executionId: 'jr_ours',
    });
    expect(calls.startJobRun).toBe(0);
  });

  test('when the page cap is reached it throws a TransientStartError that is not definite, and starts nothing', async () => {
    const { glue, calls } = fakeGlue(othersBefore(1000, T0 + 3600_000));
    const error = await new GlueStarter(glue, { maxLookupPages: 2 })
      .start(glueJob, { mayHaveStarted: true, requestedSince: T0 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransientStartError);
    expect(error).toMatchObject({ definite: false, code: 'RunLookupLimit' });
    expect((error as Error).message).toMatch(/GetJobRuns nightly: no run of job job-1 in the newest 400 runs .*not starting another run/);
    expect(calls).toEqual({ getJobRuns: 2, startJobRun: 0 });
  });

  test('without requestedSince the cap applies too: 5,000 runs by default', async () => {
    const { glue, calls } = fakeGlue(othersBefore(5_200, T0));
    await expect(new GlueStarter(glue).start(glueJob, { mayHaveStarted: true })).rejects.toMatchObject({
      definite: false,
      code: 'RunLookupLimit',
    });
    expect(calls).toEqual({ getJobRuns: 25, startJobRun: 0 });
  });

  test.each([
    ['a server fault', () => Object.assign(new Error('boom'), { name: 'InternalServiceException', $metadata: { httpStatusCode: 500 } })],
    ['throttling', () => Object.assign(new Error('slow down'), { name: 'ThrottlingException', $metadata: { httpStatusCode: 400 } })],
  ])('a lookup that fails with %s is transient and not definite, and starts nothing', async (_what, fail) => {
    const { glue, calls } = fakeGlue([], fail);
    const error = await new GlueStarter(glue).start(glueJob, { mayHaveStarted: true }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransientStartError);
    expect(error).toMatchObject({ definite: false, message: expect.stringMatching(/^GetJobRuns nightly: /) });
    expect(calls.startJobRun).toBe(0);
  });

  test('a first start does not search', async () => {
    const { glue, calls } = fakeGlue([]);
    await new GlueStarter(glue).start(glueJob);
    expect(calls).toEqual({ getJobRuns: 0, startJobRun: 1 });
  });
});

/** AppFlow execution records; `at` is startedAt in ms. */
const record = (id: string, at: number, status = 'Successful'): ExecutionRecord => ({
  executionId: id,
  executionStatus: status as never,
  startedAt: new Date(at),
});
const recordsBefore = (count: number, newestAt: number, prefix = 'r'): ExecutionRecord[] =>
  Array.from({ length: count }, (_, i) => record(`${prefix}${i}`, newestAt - i * 1000));

function fakeAppFlow(records: ExecutionRecord[]) {
  const calls = { describe: 0 };
  const appflow = {
    async send(command: unknown) {
      if (command instanceof DescribeFlowExecutionRecordsCommand) {
        calls.describe++;
        const from = Number(command.input.nextToken ?? 0);
        const max = command.input.maxResults ?? 20;
        const next = from + max < records.length ? { nextToken: String(from + max) } : {};
        return { flowExecutions: records.slice(from, from + max), ...next };
      }
      if (command instanceof StartFlowCommand) return { executionId: 'new' };
      throw new Error(`unexpected ${String(command)}`);
    },
  } as unknown as AppflowClient;
  return { appflow, calls };
}

describe('AppFlowStarter.status: finding a run in the execution records', () => {
  const quiet = { warn: () => undefined };

  test('finds a run under 700 newer records (it used to stop after 500 and answer Unknown)', async () => {
    const { appflow } = fakeAppFlow([...recordsBefore(700, T0 + 3600_000), record('ours', T0, 'InProgress')]);
    await expect(new AppFlowStarter(appflow, quiet).status(flowJob, 'ours')).resolves.toBe(RunStatus.InProgress);
  });

  test('with requestedSince and records newest first, stops at the first page older than the request: the run is gone', async () => {
    const { appflow, calls } = fakeAppFlow([...recordsBefore(150, T0 + 3600_000), ...recordsBefore(10_000, T0 - 6 * MINUTE, 'o')]);
    await expect(new AppFlowStarter(appflow, quiet).status(flowJob, 'gone', { requestedSince: T0 })).resolves.toBe(RunStatus.Gone);
    expect(calls.describe).toBe(3);
  });

  test('records in another order (undocumented): it does not stop at old records, and finds the run', async () => {
    const newestFirst = [record('ours', T0 + MINUTE, 'Error'), ...recordsBefore(400, T0 - 10 * MINUTE, 'o')];
    const { appflow } = fakeAppFlow(newestFirst.reverse());
    await expect(new AppFlowStarter(appflow, quiet).status(flowJob, 'ours', { requestedSince: T0 })).resolves.toBe(RunStatus.Failed);
  });

  test('when the page cap is reached it answers Unknown and warns, with what it searched', async () => {
    const warn = jest.fn();
    const { appflow, calls } = fakeAppFlow(recordsBefore(1000, T0 + 3600_000));
    await expect(new AppFlowStarter(appflow, { maxStatusPages: 3, warn }).status(flowJob, 'ours', { requestedSince: T0 })).resolves.toBe(
      RunStatus.Unknown,
    );
    expect(calls.describe).toBe(3);
    expect(warn).toHaveBeenCalledWith(expect.stringContaining('gave up'), {
      flowName: 'accounts',
      executionId: 'ours',
      jobId: 'job-1',
      recordsSearched: 300,
      requestedSince: new Date(T0).toISOString(),
    });
  });

  test('a run not listed at all (the records read to their end) is gone, without a warning', async () => {
    const warn = jest.fn();
    const { appflow } = fakeAppFlow(recordsBefore(30, T0));
    await expect(new AppFlowStarter(appflow, { warn }).status(flowJob, 'ours')).resolves.toBe(RunStatus.Gone);
    expect(warn).not.toHaveBeenCalled();
  });
});
