'use strict';
/**
 * A local Serverless plugin (serverless.yml, plugins): one EventBridge Scheduler schedule per job set of the stage's
 * jobSetsFile (shared/domain/jobSets.ts reads and validates it: a bad file fails the packaging, naming the set and the
 * job). Each schedule invokes the jobSets function with the set's name and the time it fired for
 * (`<aws.scheduler.scheduled-time>`), through a role that may invoke that function and send to the job set failures
 * queue, nothing else. The schedules are in the stage's own schedule group (`sluice-<stage>`), and only that group's
 * schedules may assume the role: its trust policy names the group (aws:SourceArn) and the account (aws:SourceAccount),
 * as EventBridge Scheduler's confused-deputy guidance asks (the group's ARN, not a schedule's:
 * https://docs.aws.amazon.com/scheduler/latest/UserGuide/cross-service-confused-deputy-prevention.html). No sets: no
 * schedules, no group and no role.
 *
 * Scheduler invokes Lambda asynchronously (https://docs.aws.amazon.com/lambda/latest/dg/with-eventbridge-scheduler.html):
 * its RetryPolicy and DeadLetterConfig cover only an invoke call that failed (the function missing or not permitted,
 * Lambda unavailable: https://docs.aws.amazon.com/scheduler/latest/UserGuide/configuring-schedule-dlq.html, "when a
 * schedule fails to invoke its target"; https://docs.aws.amazon.com/scheduler/latest/APIReference/API_RetryPolicy.html,
 * 0-185 attempts within 60-86400 s); once Lambda accepted
 * the event, a failure inside the function is retried by Lambda's own asynchronous retries (the function's
 * maximumRetryAttempts and on-failure destination, serverless.yml).
 */
const path = require('node:path');

const FUNCTION_ID = 'JobSetsLambdaFunction';
const ROLE_ID = 'JobSetSchedulerRole';
const GROUP_ID = 'JobSetScheduleGroup';
/**
 * Scheduler's dead-letter events go to the same queue as Lambda's records of fires that failed (serverless.yml's
 * resources, merged into the template after this hook runs: the reference is checked by the package test).
 */
const FAILURE_QUEUE_ID = 'JobSetFailureQueue';

/** A CloudFormation logical id from a set name (letters and digits only). */
function scheduleId(name) {
  return `JobSetSchedule${name
    .split(/[^A-Za-z0-9]+/)
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('')}`;
}

/** Adds the sets' schedules and their role to the compiled template. Returns the schedules' logical ids. */
function addJobSetSchedules(template, sets, { service, stage }) {
  if (sets.length === 0) return [];
  const resources = template.Resources;
  if (!resources[FUNCTION_ID]) throw new Error(`jobSetSchedules: the template has no ${FUNCTION_ID}`);
  const group = `${service}-${stage}`;
  resources[GROUP_ID] = { Type: 'AWS::Scheduler::ScheduleGroup', Properties: { Name: group } };
  resources[ROLE_ID] = {
    Type: 'AWS::IAM::Role',
    Properties: {
      // Named like the functions' roles (sluice-<stage>-<region>-...), so the roles' DenySluiceRoles covers it too.
      RoleName: { 'Fn::Sub': `${service}-${stage}-\${AWS::Region}-job-set-scheduler` },
      AssumeRolePolicyDocument: {
        Version: '2012-10-17',
        Statement: [
          {
            Effect: 'Allow',
            Principal: { Service: 'scheduler.amazonaws.com' },
            Action: 'sts:AssumeRole',
            // Only this account's schedules of this stage's group may use it (the confused deputy).
            Condition: {
              StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } },
              ArnEquals: { 'aws:SourceArn': { 'Fn::GetAtt': [GROUP_ID, 'Arn'] } },
            },
          },
        ],
      },
      Policies: [
        {
          PolicyName: 'invoke-job-sets',
          PolicyDocument: {
            Version: '2012-10-17',
            Statement: [
              { Sid: 'InvokeJobSets', Effect: 'Allow', Action: 'lambda:InvokeFunction', Resource: { 'Fn::GetAtt': [FUNCTION_ID, 'Arn'] } },
              // The schedules' dead-letter queue is written with the schedule's execution role.
              { Sid: 'DeadLetters', Effect: 'Allow', Action: 'sqs:SendMessage', Resource: { 'Fn::GetAtt': [FAILURE_QUEUE_ID, 'Arn'] } },
            ],
          },
        },
      ],
    },
  };
  const ids = [];
  for (const set of sets) {
    const id = scheduleId(set.name);
    if (resources[id]) throw new Error(`jobSetSchedules: two sets map to the logical id ${id}`);
    resources[id] = {
      Type: 'AWS::Scheduler::Schedule',
      Properties: {
        // Schedule names are at most 64 characters.
        Name: `${service}-${stage}-${set.name}`.slice(0, 64),
        GroupName: { Ref: GROUP_ID },
        Description: (set.description ?? `Job set ${set.name}`).slice(0, 512),
        ScheduleExpression: set.schedule,
        ScheduleExpressionTimezone: set.timezone,
        FlexibleTimeWindow: { Mode: 'OFF' },
        State: set.enabled ? 'ENABLED' : 'DISABLED',
        Target: {
          Arn: { 'Fn::GetAtt': [FUNCTION_ID, 'Arn'] },
          RoleArn: { 'Fn::GetAtt': [ROLE_ID, 'Arn'] },
          Input: JSON.stringify({ set: set.name, scheduledTime: '<aws.scheduler.scheduled-time>' }),
          // An invoke call that failed is made again (the run's ids are the same, so nothing runs twice); one that
          // failed every try for an hour goes to the failures queue. Errors inside the function are Lambda's to retry.
          RetryPolicy: { MaximumRetryAttempts: 5, MaximumEventAgeInSeconds: 3600 },
          DeadLetterConfig: { Arn: { 'Fn::GetAtt': [FAILURE_QUEUE_ID, 'Arn'] } },
        },
      },
    };
    ids.push(id);
  }
  return ids;
}

/** The sets of a file, validated by the same code the functions run (TypeScript, loaded with tsx). */
function loadSets(serviceDir, file) {
  const { require: tsxRequire } = require('tsx/cjs/api');
  const { loadJobSets } = tsxRequire(path.join(serviceDir, 'shared/config/jobSetsFile.ts'), __filename);
  const cwd = process.cwd();
  try {
    process.chdir(serviceDir);
    return loadJobSets(file);
  } finally {
    process.chdir(cwd);
  }
}

/**
 * The stage's sets; a bad file is the framework's user error (ServerlessError): it prints the message (which names the
 * file, the set and the job) and exits 1, without a stack trace that would bury it.
 */
function stageSets(serverless) {
  const file = serverless.service.provider.environment.JOB_SETS_FILE;
  try {
    return loadSets(serverless.serviceDir ?? serverless.config.servicePath, file);
  } catch (error) {
    if (error && error.name === 'InvalidJobSetsError') throw new serverless.classes.Error(error.message);
    if (error && error.code === 'ENOENT') throw new serverless.classes.Error(`jobSetsFile ${file}: no such file`);
    throw error;
  }
}

class JobSetSchedules {
  constructor(serverless) {
    this.hooks = {
      // Checked first, so a bad file fails before the functions are built.
      'before:package:initialize': () => void stageSets(serverless),
      'before:package:finalize': () => {
        const service = serverless.service;
        addJobSetSchedules(service.provider.compiledCloudFormationTemplate, stageSets(serverless), {
          service: service.service,
          stage: service.provider.stage,
        });
      },
    };
  }
}

module.exports = JobSetSchedules;
module.exports.addJobSetSchedules = addJobSetSchedules;
module.exports.loadSets = loadSets;
