import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { eventTime } from '../../../local/simulators/events';
import { parseObject, sendJson } from '../../../local/simulators/http';
import { pageNewestFirst, SimServiceError } from '../../../local/simulators/model';
import type { RunEngine } from '../../../local/simulators/runEngine';
import type { SimRequest, SimulatedKind } from '../../../local/simulators/simulatedKind';
import { jobIdOfName } from '../runNames';
import { errorStatus } from '../../../local/simulators/errorStatus';
import { BATCH_API_ERRORS } from './apiErrors';
import { BATCH_STATE_CHANGE } from './events';
import { isListed } from './listing';
import { jobDetail, jobSummary } from './simJob';
import { BATCH_KIND, definitionNameOf } from './spec';

/**
 * AWS Batch as the simulator plays it: REST-JSON, POST /v1/submitjob, /v1/describejobs, /v1/listjobs, /v1/terminatejob.
 * Errors carry their code in the `x-amzn-errortype` header and `{"message": ...}`: ClientException 400, ServerException
 * 500, TooManyRequestsException 429 (errorStatus). A run's name is its job definition's name; jobs have UUID ids, no
 * client token. ListJobs takes a job queue and at most one filter (JOB_NAME: case-insensitive, `*` at the end for a
 * prefix; JOB_DEFINITION; AFTER_CREATED_AT; BEFORE_CREATED_AT), newest first; without a filter only jobStatus (RUNNING).
 * A job that ended more than a day ago (in the simulator's time, options.now) is forgotten, as Batch does
 * (shared/kinds/batch/listing.ts): ListJobs and DescribeJobs leave it out, TerminateJob does not find it.
 */
const PATHS = ['/v1/submitjob', '/v1/describejobs', '/v1/listjobs', '/v1/terminatejob'];
const OPERATION_AT: Record<string, string> = {
  '/v1/submitjob': 'SubmitJob',
  '/v1/describejobs': 'DescribeJobs',
  '/v1/listjobs': 'ListJobs',
  '/v1/terminatejob': 'TerminateJob',
};
const CONTENT_TYPE = 'application/json';
const JOB_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;

export function sendBatchError(res: ServerResponse, name: string, message: string): void {
  sendJson(res, errorStatus('@aws-sdk/client-batch', name, BATCH_API_ERRORS), { message }, CONTENT_TYPE, { 'x-amzn-errortype': name });
}

const client = (message: string) => new SimServiceError('ClientException', message);
const nameOf = (value: string) => value.slice(value.lastIndexOf('/') + 1);

function text(input: Record<string, unknown>, field: string): string {
  const v = input[field];
  if (typeof v !== 'string' || v === '') throw client(`${field} is required`);
  return v;
}

/** Why a job was terminated (TerminateJob's reason), per simulator. */
const stopReasons = new WeakMap<RunEngine, Map<string, string>>();
const reasonOf = (engine: RunEngine, jobId: string) => stopReasons.get(engine)?.get(jobId);

/** A job Batch still knows (not ended more than a day ago), or undefined. */
function knownJob(engine: RunEngine, jobId: string) {
  const run = engine.find(BATCH_KIND, jobId);
  return run && isListed(run.endedAt, engine.now()) ? run : undefined;
}

/** A queue's jobs Batch still lists, newest first. */
const jobsOfQueue = (engine: RunEngine, queue: string) =>
  engine.list(BATCH_KIND).filter((r) => r.args.jobQueue === queue && isListed(r.endedAt, engine.now()));

function listFilter(input: Record<string, unknown>): (run: ReturnType<typeof jobsOfQueue>[number]) => boolean {
  const filters = input.filters;
  if (filters === undefined) {
    const status = input.jobStatus ?? 'RUNNING';
    return (run) => run.status === status;
  }
  if (!Array.isArray(filters) || filters.length !== 1) throw client('Only one filter can be used at a time');
  const { name, values } = filters[0] as { name?: unknown; values?: unknown };
  const value = Array.isArray(values) && typeof values[0] === 'string' ? values[0] : undefined;
  if (value === undefined) throw client('A filter needs one value');
  const like = (actual: string) =>
    value.endsWith('*') ? actual.toLowerCase().startsWith(value.slice(0, -1).toLowerCase()) : actual.toLowerCase() === value.toLowerCase();
  switch (name) {
    case 'JOB_NAME':
      return (run) => like(run.args.jobName ?? '');
    case 'JOB_DEFINITION':
      return (run) => (value.endsWith('*') ? run.name.startsWith(value.slice(0, -1)) : run.name === definitionNameOf(value));
    case 'AFTER_CREATED_AT':
      return (run) => run.startCallAt > Number(value);
    case 'BEFORE_CREATED_AT':
      return (run) => run.startCallAt < Number(value);
    default:
      throw client(`Unsupported filter name ${String(name)}`);
  }
}

async function handle(engine: RunEngine, req: SimRequest, res: ServerResponse): Promise<void> {
  try {
    const input = parseObject(req.body);
    if (!input) throw client('Request body is not a JSON object');
    engine.failCall(
      BATCH_KIND,
      OPERATION_AT[req.path] ?? req.path,
      typeof input.jobDefinition === 'string' ? definitionNameOf(input.jobDefinition) : '',
    );
    switch (req.path) {
      case '/v1/submitjob': {
        const jobName = text(input, 'jobName');
        if (!JOB_NAME.test(jobName)) throw client(`Job name ${jobName} is invalid: up to 128 letters, numbers, hyphens and underscores`);
        const jobQueue = nameOf(text(input, 'jobQueue'));
        const jobDefinition = text(input, 'jobDefinition');
        const { executionId } = await engine.start(BATCH_KIND, definitionNameOf(jobDefinition), { jobName, jobQueue, jobDefinition });
        sendJson(
          res,
          200,
          { jobArn: jobDetail(engine.ctx, engine.find(BATCH_KIND, executionId)!, undefined).jobArn, jobName, jobId: executionId },
          CONTENT_TYPE,
        );
        return;
      }
      case '/v1/describejobs': {
        if (engine.faults.takeStatusThrottle(BATCH_KIND)) throw new SimServiceError('TooManyRequestsException', 'Too Many Requests');
        const ids = input.jobs;
        if (!Array.isArray(ids) || ids.length > 100) throw client('jobs must hold at most 100 job ids');
        const runs = ids.flatMap((id: unknown) => (typeof id === 'string' ? (knownJob(engine, id) ?? []) : []));
        sendJson(res, 200, { jobs: runs.map((r) => jobDetail(engine.ctx, r, reasonOf(engine, r.executionId))) }, CONTENT_TYPE);
        return;
      }
      case '/v1/listjobs': {
        if (engine.faults.takeStatusThrottle(BATCH_KIND)) throw new SimServiceError('TooManyRequestsException', 'Too Many Requests');
        const matches = listFilter(input);
        const cap = input.filters === undefined ? 1000 : 100;
        const max = input.maxResults ?? cap;
        if (typeof max !== 'number' || !Number.isInteger(max) || max < 1 || max > cap) throw client(`maxResults must be 1 to ${cap}`);
        const paged = pageNewestFirst(jobsOfQueue(engine, nameOf(text(input, 'jobQueue'))).filter(matches), input.nextToken, max);
        if (!paged) throw client('Invalid nextToken');
        const next = paged.nextToken !== undefined ? { nextToken: paged.nextToken } : {};
        sendJson(res, 200, { jobSummaryList: paged.page.map((r) => jobSummary(engine.ctx, r)), ...next }, CONTENT_TYPE);
        return;
      }
      case '/v1/terminatejob': {
        const jobId = text(input, 'jobId');
        const reason = text(input, 'reason');
        const run = knownJob(engine, jobId);
        if (!run) throw client(`Job ${jobId} not found`);
        const reasons = stopReasons.get(engine) ?? new Map<string, string>();
        stopReasons.set(engine, reasons.set(jobId, reason));
        engine.stop(BATCH_KIND, run.name, [jobId]);
        sendJson(res, 200, {}, CONTENT_TYPE);
        return;
      }
      default:
        throw client(`The simulator does not implement ${req.path}`);
    }
  } catch (e) {
    if (e instanceof SimServiceError) sendBatchError(res, e.errorName, e.message);
    else sendBatchError(res, 'ServerException', e instanceof Error ? e.message : String(e));
  }
}

export const simulated: SimulatedKind = {
  kind: BATCH_KIND,
  serves: (req) => req.method === 'POST' && PATHS.includes(req.path),
  handle,
  sendError: sendBatchError,
  status: (phase, outcome) => (phase !== 'ended' ? 'RUNNING' : outcome === 'succeeded' ? 'SUCCEEDED' : 'FAILED'),
  newExecutionId: () => randomUUID(),
  endEvent: (ctx, { run }) => {
    const detail = jobDetail(ctx, run, undefined);
    return {
      version: '0',
      id: randomUUID(),
      'detail-type': BATCH_STATE_CHANGE.detailType,
      source: BATCH_STATE_CHANGE.source,
      account: ctx.account,
      time: eventTime(run.endedAt!),
      region: ctx.region,
      resources: [detail.jobArn],
      detail,
    };
  },
  checkName: (name) => (/^[A-Za-z0-9_-]{1,128}$/.test(name) ? undefined : client(`Invalid job definition ${name}`)),
  jobIdOf: (run) => jobIdOfName(run.args.jobName),
  notFound: (name) => client(`Job definition ${name} does not exist or is not ACTIVE`),
};
