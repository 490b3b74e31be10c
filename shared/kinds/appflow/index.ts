import { awsConsole, type KindDefinition } from '../kindDefinition';
import { appflowEvents } from './events';
import { APPFLOW_KIND, AppFlowJobSchema } from './spec';
import { APPFLOW_API_ERRORS } from './apiErrors';

const FLOWS = 'arn:${AWS::Partition}:appflow:${AWS::Region}:${AWS::AccountId}:flow/${param:allowedFlowPattern}';

/** AppFlow on-demand flows: StartFlow with a client token from the job id, DescribeFlowExecutionRecords, End report. */
export const appflow: KindDefinition<typeof APPFLOW_KIND, 'AppFlow', typeof AppFlowJobSchema> = {
  kind: APPFLOW_KIND,
  key: 'AppFlow',
  title: 'AppFlow flows',
  schema: AppFlowJobSchema,
  target: (spec) => spec.flowName,
  targetName: (spec) => spec.flowName,
  names: (spec) => [{ param: 'allowedFlowPattern', field: 'flowName', name: spec.flowName }],
  maxRunSeconds: 6 * 3600,
  events: appflowEvents,
  iam: {
    params: { allowedFlowPattern: 'sluice-*' },
    acquirer: [{ sid: 'StartFlows', actions: ['appflow:StartFlow'], resource: FLOWS }],
    reconciler: [{ sid: 'FlowStatus', actions: ['appflow:DescribeFlowExecutionRecords', 'appflow:CancelFlowExecutions'], resource: FLOWS }],
  },
  sdkService: 'appflow',
  apiErrors: APPFLOW_API_ERRORS,
  /** StartFlow's client token is idempotent for 8 hours (API_StartFlow.html, clientToken): a later resumed start would start a second run. */
  startRetryWindowSeconds: 8 * 3600,
  // The console has no page per run: the flow's run history, where the run is listed by its execution id.
  consoleUrl: (spec, _runId, region) => awsConsole(region, 'appflow/home', `#/details/${encodeURIComponent(spec.flowName)}?tab=runHistory`),
};
