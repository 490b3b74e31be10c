import { ExecutionStatus } from '@aws-sdk/client-sfn';
import { RunStatus } from '../../ports/jobStarter';
import { envelope, type KindConformance } from '../kindConformance';
import { SFN_STATUS_CHANGE } from './events';

const change = (status: string, extra: Record<string, unknown> = {}) =>
  envelope(SFN_STATUS_CHANGE.source, SFN_STATUS_CHANGE.detailType, {
    executionArn: 'arn:aws:states:us-east-1:111122223333:execution:sluice-etl:sluice-job-1',
    stateMachineArn: 'arn:aws:states:us-east-1:111122223333:stateMachine:sluice-etl',
    name: 'sluice-job-1',
    status,
    startDate: 1_767_258_000_000,
    stopDate: null,
    input: '{}',
    output: null,
    ...extra,
  });

export const conformance: KindConformance = {
  spec: (id, name) => ({
    kind: 'sfn',
    id,
    stateMachineArn: `arn:aws:states:us-east-1:123456789012:stateMachine:${name}`,
    input: { day: '2026-11-22' },
  }),
  statuses: {
    RUNNING: RunStatus.InProgress,
    // a closed execution of a Distributed Map that a redrive will run again
    PENDING_REDRIVE: RunStatus.InProgress,
    SUCCEEDED: RunStatus.Succeeded,
    FAILED: RunStatus.Failed,
    TIMED_OUT: RunStatus.Failed,
    ABORTED: RunStatus.Failed,
  },
  documentedStatuses: Object.values(ExecutionStatus),
  ignoredEvents: [
    ['RUNNING', change('RUNNING')],
    ['PENDING_REDRIVE', change('PENDING_REDRIVE')],
  ],
  malformedEvents: [
    ['no executionArn', change('SUCCEEDED', { executionArn: undefined })],
    ['an empty status', change('')],
    ['no stateMachineArn', change('FAILED', { stateMachineArn: undefined })],
  ],
};
