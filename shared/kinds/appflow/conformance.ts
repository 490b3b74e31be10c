import { ExecutionStatus } from '@aws-sdk/client-appflow';
import { RunStatus } from '../../ports/jobStarter';
import { envelope, type KindConformance } from '../kindConformance';
import { APPFLOW_END } from './events';

const end = (detail: Record<string, unknown>) => envelope(APPFLOW_END.source, APPFLOW_END.detailType, detail);
const detail = { 'flow-name': 'sluice-accounts', 'execution-id': 'd7c2f0a6-3b1e-4f5d-9a8c-2e6b1f0d4c3a', status: 'Execution Successful' };

export const conformance: KindConformance = {
  spec: (id, name) => ({ kind: 'appflow', id, flowName: name }),
  statuses: {
    InProgress: RunStatus.InProgress,
    CancelStarted: RunStatus.InProgress,
    Successful: RunStatus.Succeeded,
    Error: RunStatus.Failed,
    Canceled: RunStatus.Failed,
  },
  documentedStatuses: Object.values(ExecutionStatus),
  // Every End report ends a run; the Start report matches no rule.
  ignoredEvents: [],
  malformedEvents: [
    ['an End report without execution-id', end({ ...detail, 'execution-id': undefined })],
    ['an End report without status', end({ ...detail, status: '' })],
    ['the Start report (no rule matches it)', { ...end(detail), 'detail-type': 'AppFlow Start Flow Run Report' }],
  ],
};
