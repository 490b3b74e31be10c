import type { ServerResponse } from 'node:http';
import { APPFLOW_API_ERRORS } from '../../shared/kinds/appflow/apiErrors';
import { JobKind } from '../../shared/kinds/registry';
import { errorStatus } from './errorStatus';
import { flowArn } from './events';
import { epochSeconds, parseObject, sendJson } from './http';
import { pageNewestFirst, SimServiceError } from './model';
import type { RunEngine } from './runEngine';

/**
 * AppFlow speaks REST-JSON. Paths are the ones in the SDK's schemas (client-appflow dist-cjs/schemas/schemas_0.js),
 * not the API names: POST /start-flow, /describe-flow-execution-records, /cancel-flow-executions.
 * Errors: the SDK reads the code from the `x-amzn-errortype` header (then body `code`, then `__type`) and the text
 * from body `message`; the HTTP status follows each error's `httpError` trait (errorStatus reads it from the SDK).
 */
export const APPFLOW_PATHS = {
  StartFlow: '/start-flow',
  DescribeFlowExecutionRecords: '/describe-flow-execution-records',
  CancelFlowExecutions: '/cancel-flow-executions',
} as const;

const CONTENT_TYPE = 'application/json';
const OPERATION_AT = Object.fromEntries(Object.entries(APPFLOW_PATHS).map(([operation, path]) => [path, operation]));

export function isAppFlowRequest(method: string | undefined, path: string): boolean {
  return method === 'POST' && (Object.values(APPFLOW_PATHS) as string[]).includes(path);
}

export function sendAppFlowError(res: ServerResponse, name: string, message: string): void {
  sendJson(res, errorStatus('@aws-sdk/client-appflow', name, APPFLOW_API_ERRORS), { message }, CONTENT_TYPE, { 'x-amzn-errortype': name });
}

function requireFlowName(input: Record<string, unknown>): string {
  const name = input.flowName;
  if (typeof name !== 'string' || name === '') {
    throw new SimServiceError(
      'ValidationException',
      "1 validation error detected: Value null at 'flowName' failed to satisfy constraint: Member must not be null",
    );
  }
  return name;
}

function checkKnown(engine: RunEngine, flowName: string): void {
  if (!engine.isKnown(JobKind.AppFlow, flowName)) throw new SimServiceError('ResourceNotFoundException', `Flow ${flowName} does not exist`);
}

export async function handleAppFlow(engine: RunEngine, path: string, body: string, res: ServerResponse): Promise<void> {
  try {
    const input = parseObject(body);
    if (!input) throw new SimServiceError('ValidationException', 'Request body is not a JSON object');
    const flowName = requireFlowName(input);
    engine.failCall(JobKind.AppFlow, OPERATION_AT[path] ?? path, flowName);
    switch (path) {
      case APPFLOW_PATHS.StartFlow: {
        const clientToken = typeof input.clientToken === 'string' && input.clientToken !== '' ? input.clientToken : undefined;
        const { executionId } = await engine.start(JobKind.AppFlow, flowName, {}, clientToken);
        sendJson(res, 200, { flowArn: flowArn(engine.ctx, flowName), flowStatus: 'Active', executionId }, CONTENT_TYPE);
        return;
      }
      case APPFLOW_PATHS.DescribeFlowExecutionRecords: {
        if (engine.faults.takeStatusThrottle(JobKind.AppFlow)) throw new SimServiceError('ThrottlingException', 'Rate exceeded');
        checkKnown(engine, flowName);
        const maxResults = input.maxResults ?? 20;
        if (typeof maxResults !== 'number' || !Number.isInteger(maxResults) || maxResults < 1 || maxResults > 100) {
          throw new SimServiceError(
            'ValidationException',
            "Value at 'maxResults' failed to satisfy constraint: Member must have value between 1 and 100",
          );
        }
        // AppFlow does not document the order; the simulator lists newest first, like Glue (the starter does not rely on it).
        const paged = pageNewestFirst(engine.list(JobKind.AppFlow, flowName), input.nextToken, maxResults);
        if (!paged) throw new SimServiceError('ValidationException', 'Invalid nextToken');
        const flowExecutions = paged.page.map((r) => ({
          executionId: r.executionId,
          executionStatus: r.status,
          executionResult: {
            ...(r.errorMessage ? { errorInfo: { putFailuresCount: 0, executionMessage: r.errorMessage } } : {}),
            bytesProcessed: r.bytesProcessed,
            bytesWritten: r.bytesProcessed,
            recordsProcessed: r.recordsProcessed,
            numParallelProcesses: 1,
          },
          startedAt: epochSeconds(r.startedAt),
          lastUpdatedAt: epochSeconds(r.endedAt ?? r.startedAt),
          dataPullStartTime: epochSeconds(r.startedAt),
          ...(r.endedAt !== undefined ? { dataPullEndTime: epochSeconds(r.endedAt) } : {}),
        }));
        const next = paged.nextToken !== undefined ? { nextToken: paged.nextToken } : {};
        sendJson(res, 200, { flowExecutions, ...next }, CONTENT_TYPE);
        return;
      }
      case APPFLOW_PATHS.CancelFlowExecutions: {
        checkKnown(engine, flowName);
        const ids = input.executionIds;
        if (ids !== undefined && !(Array.isArray(ids) && ids.every((x) => typeof x === 'string'))) {
          throw new SimServiceError('ValidationException', "Value at 'executionIds' must be a list of strings");
        }
        const { invalid } = engine.stop(JobKind.AppFlow, flowName, ids as string[] | undefined);
        sendJson(res, 200, { invalidExecutions: invalid }, CONTENT_TYPE);
        return;
      }
      default:
        throw new SimServiceError('UnknownOperationException', `No AppFlow operation at ${path}`);
    }
  } catch (e) {
    if (e instanceof SimServiceError) sendAppFlowError(res, e.errorName, e.message);
    else sendAppFlowError(res, 'InternalServerException', e instanceof Error ? e.message : String(e));
  }
}
