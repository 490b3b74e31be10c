import { randomBytes } from 'node:crypto';
import { glueJobStateChangeEvent } from '../../../local/simulators/events';
import { handleGlue, isGlueRequest, sendGlueError } from '../../../local/simulators/glueProtocol';
import { GlueJobRunState, SimServiceError } from '../../../local/simulators/model';
import type { SimulatedKind } from '../../../local/simulators/simulatedKind';
import { GLUE_KIND } from './spec';

const BY_OUTCOME = {
  succeeded: GlueJobRunState.Succeeded,
  failed: GlueJobRunState.Failed,
  timeout: GlueJobRunState.Timeout,
  stopped: GlueJobRunState.Stopped,
} as const;

/**
 * Glue as the simulator plays it (AWS JSON 1.1, local/simulators/glueProtocol.ts): `jr_` + 64 hex run ids, no
 * idempotency token, MaxConcurrentRuns per job (RunBehaviour.glueMaxConcurrentRuns), the Job State Change event.
 */
export const simulated: SimulatedKind = {
  kind: GLUE_KIND,
  serves: (req) => isGlueRequest(req.method, req.target),
  handle: (engine, req, res) => handleGlue(engine, req.target!, req.body, res),
  sendError: sendGlueError,
  status(phase, outcome) {
    if (phase === 'running') return GlueJobRunState.Running;
    if (phase === 'stopping') return GlueJobRunState.Stopping;
    return BY_OUTCOME[outcome ?? 'failed'];
  },
  newExecutionId: () => `jr_${randomBytes(32).toString('hex')}`,
  endEvent: (ctx, { run, outcome, errorMessage }) =>
    glueJobStateChangeEvent(ctx, {
      jobName: run.name,
      jobRunId: run.executionId,
      endedAt: run.endedAt!,
      outcome,
      ...(errorMessage ? { errorMessage } : {}),
    }),
  checkName: (name) =>
    name.length === 0 || name.length > 255
      ? new SimServiceError('InvalidInputException', '1 validation error detected: JobName must have length between 1 and 255')
      : undefined,
  jobIdOf: (run) => run.args['--sluice-job-id'],
  notFound: (name) => new SimServiceError('EntityNotFoundException', `Job ${name} not found`),
  concurrencyError(engine, name, inProgress) {
    const max = engine.settings.glueMaxConcurrentRuns[name];
    return max !== undefined && inProgress >= max
      ? new SimServiceError('ConcurrentRunsExceededException', `Concurrent runs exceeded for ${name}`)
      : undefined;
  },
};
