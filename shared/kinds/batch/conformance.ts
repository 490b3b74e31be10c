import { JobStatus } from '@aws-sdk/client-batch';
import { RunStatus } from '../../ports/jobStarter';
import { envelope, type KindConformance } from '../kindConformance';
import { BATCH_STATE_CHANGE } from './events';

/** A Job State Change event as the Batch docs show it (trimmed), for a job Sluice submitted. */
const change = (status: string, extra: Record<string, unknown> = {}) =>
  envelope(BATCH_STATE_CHANGE.source, BATCH_STATE_CHANGE.detailType, {
    jobArn: 'arn:aws:batch:us-east-1:111122223333:job/4c7599ae-0a82-49aa-ba5a-4727fcce14a8',
    jobName: 'sluice-job-1',
    jobId: '4c7599ae-0a82-49aa-ba5a-4727fcce14a8',
    jobQueue: 'arn:aws:batch:us-east-1:111122223333:job-queue/sluice-queue',
    status,
    attempts: [],
    createdAt: 1_641_944_200_058,
    retryStrategy: { attempts: 2, evaluateOnExit: [] },
    dependsOn: [],
    jobDefinition: 'arn:aws:batch:us-east-1:111122223333:job-definition/sluice-nightly:1',
    parameters: {},
    ...extra,
  });

export const conformance: KindConformance = {
  spec: (id, name) => ({
    kind: 'batch',
    id,
    jobQueue: 'sluice-queue',
    jobDefinition: name,
    parameters: { day: '2026-11-22' },
    containerOverrides: { environment: [{ name: 'DAY', value: '2026-11-22' }] },
  }),
  statuses: {
    SUBMITTED: RunStatus.InProgress,
    // waiting for the jobs it depends on
    PENDING: RunStatus.InProgress,
    // queued in Batch for compute: it has not failed
    RUNNABLE: RunStatus.InProgress,
    STARTING: RunStatus.InProgress,
    RUNNING: RunStatus.InProgress,
    SUCCEEDED: RunStatus.Succeeded,
    FAILED: RunStatus.Failed,
  },
  documentedStatuses: Object.values(JobStatus),
  ignoredEvents: [
    ['RUNNABLE', change('RUNNABLE')],
    ['STARTING', change('STARTING')],
    ['RUNNING', change('RUNNING')],
    ['a job another submitter named', change('SUCCEEDED', { jobName: 'nightly-report' })],
    ['a child of an array job', change('FAILED', { jobId: '4c7599ae-0a82-49aa-ba5a-4727fcce14a8:3' })],
  ],
  malformedEvents: [
    ['no jobId', change('FAILED', { jobId: undefined })],
    ['an empty status', change('')],
    ['no jobName', change('SUCCEEDED', { jobName: undefined })],
    ['a job id over 256 characters', change('SUCCEEDED', { jobId: 'j'.repeat(257) })],
  ],
};
