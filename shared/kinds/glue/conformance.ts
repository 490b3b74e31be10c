import { JobRunState } from '@aws-sdk/client-glue';
import { RunStatus } from '../../ports/jobStarter';
import { envelope, type KindConformance } from '../kindConformance';
import { GLUE_STATE_CHANGE } from './events';

const change = (state: string, extra: Record<string, unknown> = {}) =>
  envelope(GLUE_STATE_CHANGE.source, GLUE_STATE_CHANGE.detailType, {
    jobName: 'sluice-nightly',
    severity: 'INFO',
    state,
    jobRunId: 'jr_0f3e5b8c2a',
    message: `Job run ${state}`,
    ...extra,
  });

export const conformance: KindConformance = {
  spec: (id, name) => ({ kind: 'glue', id, jobName: name, arguments: { '--day': '2026-11-22' } }),
  statuses: {
    STARTING: RunStatus.InProgress,
    RUNNING: RunStatus.InProgress,
    STOPPING: RunStatus.InProgress,
    // job run queuing: the run waits for capacity, it has not failed
    WAITING: RunStatus.InProgress,
    SUCCEEDED: RunStatus.Succeeded,
    FAILED: RunStatus.Failed,
    ERROR: RunStatus.Failed,
    STOPPED: RunStatus.Failed,
    TIMEOUT: RunStatus.Failed,
    // a queued run that waited past its queuing limit and never ran
    EXPIRED: RunStatus.Failed,
  },
  documentedStatuses: Object.values(JobRunState),
  ignoredEvents: [
    ['RUNNING', change('RUNNING')],
    ['STARTING', change('STARTING')],
    ['STOPPING', change('STOPPING')],
  ],
  malformedEvents: [
    ['no jobRunId', change('FAILED', { jobRunId: undefined })],
    ['an empty state', change('')],
    ['a run id over 256 characters', change('SUCCEEDED', { jobRunId: 'r'.repeat(257) })],
  ],
};
