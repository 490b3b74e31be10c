import { randomBytes, randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { eventTime } from '../../../local/simulators/events';
import { parseObject, sendJson } from '../../../local/simulators/http';
import { SimServiceError } from '../../../local/simulators/model';
import type { RunEngine } from '../../../local/simulators/runEngine';
import type { SimRequest, SimulatedKind } from '../../../local/simulators/simulatedKind';
import { jobIdOfName } from '../runNames';
import { errorStatus } from '../../../local/simulators/errorStatus';
import { ECS_API_ERRORS } from './apiErrors';
import { ECS_TASK_STATE_CHANGE } from './events';
import { apiTask, clusterArnOf, eventTask, simTask } from './simTask';
import { ECS_KIND, familyOf } from './spec';

/**
 * ECS as the simulator plays it: AWS JSON 1.1, `X-Amz-Target: AmazonEC2ContainerServiceV20141113.<Operation>`; errors
 * are HTTP 400 (500 for ServerException; errorStatus) with `{"__type": "<ErrorName>", "message": "..."}`. RunTask (count 1),
 * DescribeTasks, StopTask. A run's name is its task definition's family; its client token the RunTask's. A token is
 * kept 24 hours (per family here, per cluster on ECS): the same parameters get the first task back, others a
 * ConflictException naming it. A start fault whose error is a placement reason (`RESOURCE:CPU`, `RESOURCE:MEMORY`,
 * `AGENT`, ...) is answered as ECS does: 200, no task, `failures`. A failStartsAfterStarting fault with a placement
 * reason is what a capacity provider does when it finds no capacity: RunTask answers 200 with the task (PROVISIONING),
 * which then stops with stop code TaskFailedToStart and that reason, its container never run
 * (https://docs.aws.amazon.com/AmazonECS/latest/developerguide/stopped-task-errors.html).
 */
const TARGET_PREFIX = 'AmazonEC2ContainerServiceV20141113.';
const CONTENT_TYPE = 'application/x-amz-json-1.1';
const TOKEN_TTL_MS = 24 * 3600_000;
const PLACEMENT_REASON = /^(RESOURCE:[A-Z]+|AGENT|ATTRIBUTE|LOCATION|MISSING)$/;
const FAMILY = /^[A-Za-z0-9_-]{1,255}$/;

/** ConflictException carries the tasks the token already started. */
class TokenConflict extends SimServiceError {
  constructor(readonly resourceIds: string[]) {
    super('ConflictException', 'The specified client token is already in use by a RunTask request with different parameters.');
  }
}

export function sendEcsError(res: ServerResponse, name: string, message: string, extra: Record<string, unknown> = {}): void {
  sendJson(res, errorStatus('@aws-sdk/client-ecs', name, ECS_API_ERRORS), { __type: name, message, ...extra }, CONTENT_TYPE);
}

const invalid = (message: string) => new SimServiceError('InvalidParameterException', message);
const clusterOf = (value: unknown): string =>
  typeof value === 'string' && value !== '' ? value.slice(value.lastIndexOf('/') + 1) : 'default';

/** Tasks that never started (a capacity provider found no capacity), with their stop reason. Task ARNs are unique. */
const failedToStart = new Map<string, string>();

/** Why a run was stopped (StopTask's reason), per simulator. */
const stopReasons = new WeakMap<RunEngine, Map<string, string>>();
const reasonOf = (engine: RunEngine, taskArn: string) => stopReasons.get(engine)?.get(taskArn);

function taskOf(engine: RunEngine, arn: unknown, cluster: unknown) {
  const run = typeof arn === 'string' ? engine.find(ECS_KIND, arn) : undefined;
  return run && (cluster === undefined || run.args.cluster === clusterOf(cluster)) ? run : undefined;
}

async function runTask(engine: RunEngine, input: Record<string, unknown>, res: ServerResponse): Promise<void> {
  const { taskDefinition, clientToken, startedBy, count = 1 } = input;
  if (typeof taskDefinition !== 'string' || taskDefinition === '') throw invalid('taskDefinition is required');
  if (count !== 1) throw invalid('the simulator runs one task per RunTask (count 1)');
  const cluster = clusterOf(input.cluster);
  const { clientToken: _token, ...request } = input;
  const args = {
    cluster,
    taskDefinition,
    ...(typeof startedBy === 'string' ? { startedBy } : {}),
    ...(typeof input.launchType === 'string' ? { launchType: input.launchType } : {}),
    request: JSON.stringify(request),
  };
  try {
    const { executionId } = await engine.start(
      ECS_KIND,
      familyOf(taskDefinition),
      args,
      typeof clientToken === 'string' ? clientToken : undefined,
    );
    sendJson(
      res,
      200,
      { tasks: [apiTask(simTask(engine.ctx, engine.find(ECS_KIND, executionId)!, undefined))], failures: [] },
      CONTENT_TYPE,
    );
  } catch (e) {
    if (!(e instanceof SimServiceError) || !PLACEMENT_REASON.test(e.errorName)) throw e;
    if (e.createdExecutionId !== undefined)
      return provisionedButNotStarted(engine, e.createdExecutionId, `${e.errorName}: ${e.message}`, res);
    const failure = { arn: clusterArnOf(engine.ctx, cluster), reason: e.errorName, detail: e.message };
    sendJson(res, 200, { tasks: [], failures: [failure] }, CONTENT_TYPE);
  }
}

/** The task is answered as created (PROVISIONING), then stops at once with TaskFailedToStart and `reason`. */
function provisionedButNotStarted(engine: RunEngine, taskArn: string, reason: string, res: ServerResponse): void {
  engine.setStatus(ECS_KIND, taskArn, 'PROVISIONING');
  const run = engine.find(ECS_KIND, taskArn)!;
  sendJson(res, 200, { tasks: [apiTask(simTask(engine.ctx, run, undefined))], failures: [] }, CONTENT_TYPE);
  failedToStart.set(taskArn, reason);
  engine.stop(ECS_KIND, run.name, [taskArn]);
}

async function handle(engine: RunEngine, req: SimRequest, res: ServerResponse): Promise<void> {
  const operation = req.target!.slice(TARGET_PREFIX.length);
  try {
    const input = parseObject(req.body);
    if (!input) throw new SimServiceError('SerializationException', 'Request body is not a JSON object');
    engine.failCall(ECS_KIND, operation, typeof input.taskDefinition === 'string' ? familyOf(input.taskDefinition) : '');
    switch (operation) {
      case 'RunTask':
        return await runTask(engine, input, res);
      case 'DescribeTasks': {
        if (engine.faults.takeStatusThrottle(ECS_KIND)) throw new SimServiceError('ThrottlingException', 'Rate exceeded');
        const arns = input.tasks;
        if (!Array.isArray(arns) || arns.length < 1 || arns.length > 100) throw invalid('tasks must name 1 to 100 tasks');
        const found = arns.map((arn: unknown) => [arn, taskOf(engine, arn, input.cluster)] as const);
        sendJson(
          res,
          200,
          {
            tasks: found.flatMap(([arn, run]) =>
              run ? [apiTask(simTask(engine.ctx, run, reasonOf(engine, String(arn)), failedToStart.get(String(arn))))] : [],
            ),
            failures: found.flatMap(([arn, run]) => (run ? [] : [{ arn, reason: 'MISSING' }])),
          },
          CONTENT_TYPE,
        );
        return;
      }
      case 'StopTask': {
        const run = taskOf(engine, input.task, input.cluster);
        if (!run) throw invalid('The referenced task was not found.');
        if (typeof input.reason === 'string') {
          const reasons = stopReasons.get(engine) ?? new Map<string, string>();
          reasons.set(run.executionId, input.reason);
          stopReasons.set(engine, reasons);
        }
        engine.stop(ECS_KIND, run.name, [run.executionId]);
        const now = engine.find(ECS_KIND, run.executionId)!;
        const task = simTask(engine.ctx, now, reasonOf(engine, run.executionId), failedToStart.get(run.executionId));
        sendJson(res, 200, { task: apiTask(task) }, CONTENT_TYPE);
        return;
      }
      default:
        throw new SimServiceError('UnknownOperationException', `The simulator does not implement ${req.target}`);
    }
  } catch (e) {
    if (e instanceof TokenConflict) sendEcsError(res, e.errorName, e.message, { resourceIds: e.resourceIds });
    else if (e instanceof SimServiceError) sendEcsError(res, e.errorName, e.message);
    else sendEcsError(res, 'ServerException', e instanceof Error ? e.message : String(e));
  }
}

export const simulated: SimulatedKind = {
  kind: ECS_KIND,
  serves: (req) => req.method === 'POST' && req.target?.startsWith(TARGET_PREFIX) === true,
  handle,
  sendError: (res, name, message) => sendEcsError(res, name, message),
  status: (phase) => (phase === 'running' ? 'RUNNING' : phase === 'stopping' ? 'STOPPING' : 'STOPPED'),
  newExecutionId: (_name, ctx, _token, args) =>
    `arn:aws:ecs:${ctx.region}:${ctx.account}:task/${args.cluster ?? 'default'}/${randomBytes(16).toString('hex')}`,
  endEvent: (ctx, { run }) => ({
    version: '0',
    id: randomUUID(),
    'detail-type': ECS_TASK_STATE_CHANGE.detailType,
    source: ECS_TASK_STATE_CHANGE.source,
    account: ctx.account,
    time: eventTime(run.endedAt!),
    region: ctx.region,
    resources: [run.executionId],
    detail: eventTask(simTask(ctx, run, undefined, failedToStart.get(run.executionId))),
  }),
  checkName: (name) => (FAMILY.test(name) ? undefined : invalid(`Invalid revision number or family: ${name}`)),
  jobIdOf: (run) => jobIdOfName(run.clientToken) ?? jobIdOfName(run.args.startedBy),
  notFound: () => new SimServiceError('ClientException', 'TaskDefinition not found.'),
  repeat: (_engine, { run, at }, args, callAt) => {
    if (callAt - at > TOKEN_TTL_MS) return 'new';
    return run.args.cluster === args.cluster && run.args.request === args.request ? 'replay' : new TokenConflict([run.executionId]);
  },
};
