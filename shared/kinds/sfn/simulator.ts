import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { eventTime } from '../../../local/simulators/events';
import { epochSeconds, parseObject, sendJson } from '../../../local/simulators/http';
import { SimServiceError, type SimOutcome } from '../../../local/simulators/model';
import type { RunEngine } from '../../../local/simulators/runEngine';
import type { SimRequest, SimulatedKind } from '../../../local/simulators/simulatedKind';
import { errorStatus } from '../../../local/simulators/errorStatus';
import { SFN_API_ERRORS } from './apiErrors';
import { SFN_STATUS_CHANGE } from './events';
import { SFN_KIND } from './spec';

/**
 * Step Functions as the simulator plays it: AWS JSON 1.0, `X-Amz-Target: AWSStepFunctions.<Operation>`; errors are
 * HTTP 400 (500 for server faults; errorStatus) with `{"__type": "<ErrorName>", "message": "..."}`. StartExecution,
 * DescribeExecution, StopExecution, DescribeStateMachine. A run's name is its state machine's name; its client token
 * the execution name. State machines whose name starts with `express` are EXPRESS (the rest STANDARD).
 */
const TARGET_PREFIX = 'AWSStepFunctions.';
const CONTENT_TYPE = 'application/x-amz-json-1.0';
const STATE_MACHINE_ARN = /^arn:aws[a-z-]*:states:([a-z0-9-]+):(\d{12}):stateMachine:([A-Za-z0-9_-]{1,80})$/;
const EXECUTION_ARN = /^arn:aws[a-z-]*:states:[a-z0-9-]+:\d{12}:execution:[A-Za-z0-9_-]{1,80}:[^:]{1,80}$/;
/** Execution names: no whitespace, brackets, wildcards, `"#%\^|~`$&,;:/` or control characters; 1-80 characters. */
const EXECUTION_NAME = /^[^\s<>{}[\]?*"#%\\^|~`$&,;:/\u0000-\u001f\u007f-\u009f]{1,80}$/;

const STATUS: Record<SimOutcome, string> = { succeeded: 'SUCCEEDED', failed: 'FAILED', timeout: 'TIMED_OUT', stopped: 'ABORTED' };
const FAILURE: Partial<Record<SimOutcome, { error: string; cause: string }>> = {
  failed: { error: 'States.TaskFailed', cause: 'Simulated failure' },
  timeout: { error: 'States.Timeout', cause: 'The execution timed out' },
  stopped: { error: 'Sluice.Stopped', cause: 'stopped' },
};

export function sendSfnError(res: ServerResponse, name: string, message: string): void {
  sendJson(res, errorStatus('@aws-sdk/client-sfn', name, SFN_API_ERRORS), { __type: name, message }, CONTENT_TYPE);
}

const invalid = (name: string, message: string) => new SimServiceError(name, message);

function stateMachineOf(engine: RunEngine, arn: unknown): string {
  const match = typeof arn === 'string' ? STATE_MACHINE_ARN.exec(arn) : null;
  if (!match) throw invalid('InvalidArn', `Invalid Arn: '${String(arn)}'`);
  const name = match[3]!;
  if (!engine.isKnown(SFN_KIND, name)) throw simulated.notFound(name);
  return name;
}

function executionOf(engine: RunEngine, arn: unknown) {
  if (typeof arn !== 'string' || !EXECUTION_ARN.test(arn)) throw invalid('InvalidArn', `Invalid Arn: '${String(arn)}'`);
  const run = engine.find(SFN_KIND, arn);
  if (!run) throw invalid('ExecutionDoesNotExist', `Execution Does Not Exist: '${arn}'`);
  return run;
}

const stateMachineArn = (engine: RunEngine, name: string) =>
  `arn:aws:states:${engine.ctx.region}:${engine.ctx.account}:stateMachine:${name}`;

async function handle(engine: RunEngine, req: SimRequest, res: ServerResponse): Promise<void> {
  const operation = req.target!.slice(TARGET_PREFIX.length);
  try {
    const input = parseObject(req.body);
    if (!input) throw invalid('SerializationException', 'Request body is not a JSON object');
    const named = input.stateMachineArn ?? input.executionArn;
    engine.failCall(SFN_KIND, operation, typeof named === 'string' ? (named.split(':')[6] ?? '') : '');
    switch (operation) {
      case 'StartExecution': {
        const machine = stateMachineOf(engine, input.stateMachineArn);
        const name = input.name;
        if (name !== undefined && (typeof name !== 'string' || !EXECUTION_NAME.test(name)))
          throw invalid('InvalidName', `Invalid Name: '${String(name)}'`);
        const body = input.input ?? '{}';
        if (typeof body !== 'string') throw invalid('InvalidExecutionInput', 'input must be a string of JSON');
        try {
          JSON.parse(body);
        } catch {
          throw invalid('InvalidExecutionInput', 'Invalid State Machine Execution Input: not JSON');
        }
        const { executionId } = await engine.start(SFN_KIND, machine, { input: body }, typeof name === 'string' ? name : undefined);
        sendJson(
          res,
          200,
          { executionArn: executionId, startDate: epochSeconds(engine.find(SFN_KIND, executionId)!.startedAt) },
          CONTENT_TYPE,
        );
        return;
      }
      case 'DescribeExecution': {
        if (engine.faults.takeStatusThrottle(SFN_KIND)) throw invalid('ThrottlingException', 'Rate exceeded');
        const run = executionOf(engine, input.executionArn);
        const failure = run.outcome ? FAILURE[run.outcome] : undefined;
        sendJson(
          res,
          200,
          {
            executionArn: run.executionId,
            stateMachineArn: stateMachineArn(engine, run.name),
            name: run.clientToken ?? run.executionId.split(':').pop(),
            status: run.status,
            startDate: epochSeconds(run.startedAt),
            ...(run.endedAt !== undefined ? { stopDate: epochSeconds(run.endedAt) } : {}),
            input: run.args.input ?? '{}',
            inputDetails: { included: true },
            ...(run.outcome === 'succeeded' ? { output: '{}', outputDetails: { included: true } } : {}),
            ...(failure ?? {}),
          },
          CONTENT_TYPE,
        );
        return;
      }
      case 'StopExecution': {
        const run = executionOf(engine, input.executionArn);
        engine.stop(SFN_KIND, run.name, [run.executionId]);
        sendJson(res, 200, { stopDate: epochSeconds(engine.now()) }, CONTENT_TYPE);
        return;
      }
      case 'DescribeStateMachine': {
        const machine = stateMachineOf(engine, input.stateMachineArn);
        sendJson(
          res,
          200,
          {
            stateMachineArn: stateMachineArn(engine, machine),
            name: machine,
            status: 'ACTIVE',
            definition: '{"StartAt":"Work","States":{"Work":{"Type":"Pass","End":true}}}',
            roleArn: `arn:aws:iam::${engine.ctx.account}:role/${machine}`,
            type: machine.startsWith('express') ? 'EXPRESS' : 'STANDARD',
            creationDate: epochSeconds(0),
          },
          CONTENT_TYPE,
        );
        return;
      }
      default:
        throw invalid('UnknownOperationException', `The simulator does not implement ${req.target}`);
    }
  } catch (e) {
    if (e instanceof SimServiceError) sendSfnError(res, e.errorName, e.message);
    else sendSfnError(res, 'InternalFailure', e instanceof Error ? e.message : String(e));
  }
}

export const simulated: SimulatedKind = {
  kind: SFN_KIND,
  serves: (req) => req.method === 'POST' && req.target?.startsWith(TARGET_PREFIX) === true,
  handle,
  sendError: sendSfnError,
  status: (phase, outcome) => (phase === 'ended' ? STATUS[outcome ?? 'failed'] : 'RUNNING'),
  newExecutionId: (name, ctx, executionName) =>
    `arn:aws:states:${ctx.region}:${ctx.account}:execution:${name}:${executionName ?? randomUUID()}`,
  endEvent(ctx, { run, outcome }) {
    const failure = FAILURE[outcome];
    return {
      version: '0',
      id: randomUUID(),
      'detail-type': SFN_STATUS_CHANGE.detailType,
      source: SFN_STATUS_CHANGE.source,
      account: ctx.account,
      time: eventTime(run.endedAt!),
      region: ctx.region,
      resources: [run.executionId],
      detail: {
        executionArn: run.executionId,
        stateMachineArn: `arn:aws:states:${ctx.region}:${ctx.account}:stateMachine:${run.name}`,
        name: run.executionId.split(':').pop(),
        status: STATUS[outcome],
        startDate: run.startedAt,
        stopDate: run.endedAt,
        input: run.args.input ?? '{}',
        output: outcome === 'succeeded' ? '{}' : null,
        inputDetails: { included: true },
        outputDetails: outcome === 'succeeded' ? { included: true } : null,
        error: failure?.error ?? null,
        cause: failure?.cause ?? null,
      },
    };
  },
  checkName: () => undefined,
  jobIdOf: (run) => (run.clientToken?.startsWith('sluice-') ? run.clientToken.slice('sluice-'.length) : undefined),
  notFound: (name) => new SimServiceError('StateMachineDoesNotExist', `State Machine Does Not Exist: '${name}'`),
  // A name is unique for 90 days: the same input while open is the same execution; anything else is refused.
  repeat: (_engine, { run }, args) =>
    run.endedAt === undefined && run.args.input === args.input
      ? 'replay'
      : new SimServiceError('ExecutionAlreadyExists', `Execution Already Exists: '${run.executionId}'`),
};
