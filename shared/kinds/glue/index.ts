import { awsConsole, type KindDefinition } from '../kindDefinition';
import { glueEvents } from './events';
import { GLUE_KIND, GlueJobSchema } from './spec';
import { GLUE_API_ERRORS } from './apiErrors';
import { isReservedGlueArgument } from './reservedArguments';

const JOBS = 'arn:${AWS::Partition}:glue:${AWS::Region}:${AWS::AccountId}:job/${param:allowedGlueJobPattern}';

/** Glue jobs: StartJobRun with the job id as an argument (found again with GetJobRuns), GetJobRun, Job State Change. */
export const glue: KindDefinition<typeof GLUE_KIND, 'Glue', typeof GlueJobSchema> = {
  kind: GLUE_KIND,
  key: 'Glue',
  title: 'Glue jobs',
  schema: GlueJobSchema,
  target: (spec) => spec.jobName,
  targetName: (spec) => spec.jobName,
  overrideSettings: ['arguments'],
  overrides: (spec) => {
    const names = Object.keys(spec.arguments ?? {});
    return names.length === 0 ? [] : [{ setting: 'arguments', field: 'arguments', names, reserved: names.filter(isReservedGlueArgument) }];
  },
  names: (spec) => [{ param: 'allowedGlueJobPattern', field: 'jobName', name: spec.jobName }],
  maxRunSeconds: 48 * 3600,
  events: glueEvents,
  iam: {
    params: { allowedGlueJobPattern: 'sluice-*' },
    // GetJobRuns finds the run an interrupted start may have made (Glue has no idempotency token).
    acquirer: [{ sid: 'StartGlueJobs', actions: ['glue:StartJobRun', 'glue:GetJobRuns'], resource: JOBS }],
    reconciler: [{ sid: 'GlueJobStatus', actions: ['glue:GetJobRun', 'glue:BatchStopJobRun'], resource: JOBS }],
  },
  sdkService: 'glue',
  apiErrors: GLUE_API_ERRORS,
  consoleUrl: (spec, runId, region) =>
    awsConsole(region, 'gluestudio/home', `#/job/${encodeURIComponent(spec.jobName)}/run/${encodeURIComponent(runId)}`),
};
