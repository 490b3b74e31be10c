import type { ServerResponse } from 'node:http';
import { GLUE_API_ERRORS } from '../../shared/kinds/glue/apiErrors';
import { JobKind } from '../../shared/kinds/registry';
import { errorStatus } from './errorStatus';
import { epochSeconds, isStringRecord, parseObject, sendJson } from './http';
import { pageNewestFirst, SimServiceError } from './model';
import type { RunEngine } from './runEngine';

/**
 * Glue speaks AWS JSON 1.1: POST / with `X-Amz-Target: AWSGlue.<Operation>`. Errors are HTTP 400 (500 for server
 * faults: errorStatus reads the fault from the SDK) with body `{"__type": "<ErrorName>", "Message": "..."}`; the SDK
 * reads `__type` first and Glue's error shapes carry `Message` with a capital M.
 */
export const GLUE_TARGET_PREFIX = 'AWSGlue.';
const CONTENT_TYPE = 'application/x-amz-json-1.1';

export function isGlueRequest(method: string | undefined, target: string | undefined): boolean {
  return method === 'POST' && typeof target === 'string' && target.startsWith(GLUE_TARGET_PREFIX);
}

export function sendGlueError(res: ServerResponse, name: string, message: string): void {
  sendJson(res, errorStatus('@aws-sdk/client-glue', name, GLUE_API_ERRORS), { __type: name, Message: message }, CONTENT_TYPE);
}

const invalid = (message: string) => new SimServiceError('InvalidInputException', message);

function requireString(input: Record<string, unknown>, field: string): string {
  const v = input[field];
  if (typeof v !== 'string' || v === '')
    throw invalid(`1 validation error detected: Value null at '${field}' failed to satisfy constraint: Member must not be null`);
  return v;
}

function checkKnown(engine: RunEngine, jobName: string): void {
  if (!engine.isKnown(JobKind.Glue, jobName)) throw new SimServiceError('EntityNotFoundException', `Job ${jobName} not found`);
}

function jobRun(r: NonNullable<ReturnType<RunEngine['find']>>) {
  const end = r.endedAt ?? r.startedAt;
  return {
    Id: r.executionId,
    Attempt: 0,
    JobName: r.name,
    JobMode: 'SCRIPT',
    StartedOn: epochSeconds(r.startedAt),
    LastModifiedOn: epochSeconds(end),
    ...(r.endedAt !== undefined ? { CompletedOn: epochSeconds(r.endedAt) } : {}),
    JobRunState: r.status,
    Arguments: r.args,
    ...(r.errorMessage ? { ErrorMessage: r.errorMessage } : {}),
    ExecutionTime: Math.round((end - r.startedAt) / 1000),
    Timeout: 2880,
    WorkerType: 'G.1X',
    NumberOfWorkers: 2,
    GlueVersion: '4.0',
  };
}

export async function handleGlue(engine: RunEngine, target: string, body: string, res: ServerResponse): Promise<void> {
  const operation = target.slice(GLUE_TARGET_PREFIX.length);
  try {
    const input = parseObject(body);
    if (!input) throw new SimServiceError('SerializationException', 'Request body is not a JSON object');
    engine.failCall(JobKind.Glue, operation, typeof input.JobName === 'string' ? input.JobName : '');
    switch (operation) {
      case 'StartJobRun': {
        const jobName = requireString(input, 'JobName');
        const args = input.Arguments ?? {};
        if (!isStringRecord(args)) throw invalid('Arguments must map strings to strings');
        const { executionId } = await engine.start(JobKind.Glue, jobName, args);
        sendJson(res, 200, { JobRunId: executionId }, CONTENT_TYPE);
        return;
      }
      case 'GetJobRun': {
        if (engine.faults.takeStatusThrottle(JobKind.Glue)) throw new SimServiceError('ThrottlingException', 'Rate exceeded');
        const jobName = requireString(input, 'JobName');
        const runId = requireString(input, 'RunId');
        checkKnown(engine, jobName);
        const run = engine.find(JobKind.Glue, runId);
        if (!run || run.name !== jobName)
          throw new SimServiceError('EntityNotFoundException', `Job Run ${runId} not found for job ${jobName}`);
        sendJson(res, 200, { JobRun: jobRun(run) }, CONTENT_TYPE);
        return;
      }
      case 'GetJobRuns': {
        if (engine.faults.takeStatusThrottle(JobKind.Glue)) throw new SimServiceError('ThrottlingException', 'Rate exceeded');
        const jobName = requireString(input, 'JobName');
        checkKnown(engine, jobName);
        const max = input.MaxResults ?? 100;
        if (typeof max !== 'number' || !Number.isInteger(max) || max < 1 || max > 200)
          throw invalid('MaxResults must be between 1 and 200');
        // Newest first, as documented: "GetJobRuns returns the job runs in chronological order, with the newest jobs returned first."
        const paged = pageNewestFirst(engine.list(JobKind.Glue, jobName), input.NextToken, max);
        if (!paged) throw invalid('Invalid NextToken');
        const next = paged.nextToken !== undefined ? { NextToken: paged.nextToken } : {};
        sendJson(res, 200, { JobRuns: paged.page.map(jobRun), ...next }, CONTENT_TYPE);
        return;
      }
      case 'BatchStopJobRun': {
        const jobName = requireString(input, 'JobName');
        const ids = input.JobRunIds;
        if (!Array.isArray(ids) || ids.length < 1 || ids.length > 25 || !ids.every((x) => typeof x === 'string')) {
          throw invalid('JobRunIds must hold 1 to 25 run ids');
        }
        checkKnown(engine, jobName);
        const { stopped, invalid: notStopped } = engine.stop(JobKind.Glue, jobName, ids as string[]);
        sendJson(
          res,
          200,
          {
            SuccessfulSubmissions: stopped.map((JobRunId) => ({ JobName: jobName, JobRunId })),
            Errors: notStopped.map((JobRunId) => ({
              JobName: jobName,
              JobRunId,
              ErrorDetail: { ErrorCode: 'InvalidInputException', ErrorMessage: `Job run ${JobRunId} is not running` },
            })),
          },
          CONTENT_TYPE,
        );
        return;
      }
      default:
        throw new SimServiceError('UnknownOperationException', `The simulator does not implement AWSGlue.${operation}`);
    }
  } catch (e) {
    if (e instanceof SimServiceError) sendGlueError(res, e.errorName, e.message);
    else sendGlueError(res, 'InternalServiceException', e instanceof Error ? e.message : String(e));
  }
}
