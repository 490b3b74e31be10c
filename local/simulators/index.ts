/**
 * Local AppFlow + Glue API simulators for the real AWS SDK v3 clients.
 *
 *   const sim = await startJobApiSimulator({ durationMs: 200, emit: (event) => bus.put(event) });
 *   const glue = new GlueClient({ endpoint: sim.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
 *   ...
 *   expect(sim.maxObservedConcurrency('pool-a')).toBeLessThanOrEqual(4);
 *   await sim.close();
 *
 * From another process, drive it with jobApiSimulatorControl(sim.endpoint).
 */
export { startJobApiSimulator, type JobApiSimulator, type JobApiSimulatorOptions } from './jobApiSimulator';
export type { RunBehaviour } from './runEngine';
export type { FaultPatch, FaultState, KindFaults, StartFault } from './faults';
export { jobApiSimulatorControl, type JobApiSimulatorControl } from './controlClient';
export type { JsonRunBehaviour } from './controlRoutes';
export { concurrencyTimeline, maxConcurrency, type RunRecords } from './runBook';
export { APPFLOW_PATHS } from './appflowProtocol';
export {
  AppFlowEventStatus,
  APPFLOW_END_DETAIL_TYPE,
  APPFLOW_SOURCE,
  GLUE_DETAIL_TYPE,
  GLUE_SOURCE,
  type AppFlowEndFlowRunDetail,
  type AppFlowEndFlowRunEvent,
  type GlueJobStateChangeDetail,
  type GlueJobStateChangeEvent,
} from './events';
export {
  AppFlowExecutionStatus,
  GlueJobRunState,
  PlannedOutcome,
  SimOutcome,
  type ConcurrencyPoint,
  type EventBridgeEvent,
  type PerRun,
  type RunArgs,
  type SimDroppedEvent,
  type SimEmittedEvent,
  type SimErrorName,
  type SimRun,
  type SimStartCall,
} from './model';
