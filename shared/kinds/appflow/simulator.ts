import { randomUUID } from 'node:crypto';
import { APPFLOW_PATHS, handleAppFlow, isAppFlowRequest, sendAppFlowError } from '../../../local/simulators/appflowProtocol';
import { appflowEndFlowRunEvent } from '../../../local/simulators/events';
import { AppFlowExecutionStatus, SimServiceError } from '../../../local/simulators/model';
import type { SimulatedKind } from '../../../local/simulators/simulatedKind';
import { APPFLOW_KIND } from './spec';

export { APPFLOW_PATHS };

const FLOW_NAME = /^[a-zA-Z0-9][\w!@#.-]{0,255}$/;
const HOURS_8 = 8 * 60 * 60 * 1000;

/**
 * AppFlow as the simulator plays it (REST-JSON, local/simulators/appflowProtocol.ts): UUID execution ids,
 * client tokens kept 8 hours (RunEngineOptions.idempotencyWindowMs), the End Flow Run Report.
 */
export const simulated: SimulatedKind = {
  kind: APPFLOW_KIND,
  serves: (req) => isAppFlowRequest(req.method, req.path),
  handle: (engine, req, res) => handleAppFlow(engine, req.path, req.body, res),
  sendError: sendAppFlowError,
  status(phase, outcome) {
    if (phase === 'running') return AppFlowExecutionStatus.InProgress;
    if (phase === 'stopping') return AppFlowExecutionStatus.CancelStarted;
    return outcome === 'succeeded'
      ? AppFlowExecutionStatus.Successful
      : outcome === 'stopped'
        ? AppFlowExecutionStatus.Canceled
        : AppFlowExecutionStatus.Error;
  },
  newExecutionId: () => randomUUID(),
  endEvent: (ctx, { run, outcome, recordsProcessed, bytesProcessed }) =>
    appflowEndFlowRunEvent(ctx, {
      flowName: run.name,
      executionId: run.executionId,
      startedAt: run.startedAt,
      endedAt: run.endedAt!,
      outcome,
      recordsProcessed,
      bytesProcessed,
    }),
  checkName: (name) =>
    FLOW_NAME.test(name)
      ? undefined
      : new SimServiceError(
          'ValidationException',
          `1 validation error detected: Value '${name}' at 'flowName' failed to satisfy constraint`,
        ),
  jobIdOf: (run) => run.clientToken?.replace(/^sluice-/, ''),
  notFound: (name) => new SimServiceError('ResourceNotFoundException', `Flow ${name} does not exist`),
  repeat: (engine, earlier, _args, callAt) => (callAt - earlier.at < (engine.options.idempotencyWindowMs ?? HOURS_8) ? 'replay' : 'new'),
};
