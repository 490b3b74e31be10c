import {
  DescribeExecutionCommand,
  DescribeStateMachineCommand,
  SFNClient,
  StartExecutionCommand,
  StopExecutionCommand,
} from '@aws-sdk/client-sfn';
import { jobApiClient } from '../../adapters/awsClients';
import { startFailure, statusFailure, stopFailure } from '../../adapters/apiErrors';
import { PermanentStartError, TransientStartError } from '../../errors';
import { type JobStarter, RunStatus } from '../../ports/jobStarter';
import { StopResult } from '../apiErrors';
import { DESCRIBE_EXECUTION, DESCRIBE_STATE_MACHINE, START_EXECUTION, STOP_EXECUTION } from './apiErrors';
import { executionArnOf, executionNameOf, SFN_KIND, type SfnJob } from './spec';
import type { JobSpec } from '../registry';

/** DescribeExecution's status values. */
export const SfnExecutionStatus = {
  Running: 'RUNNING',
  Succeeded: 'SUCCEEDED',
  Failed: 'FAILED',
  TimedOut: 'TIMED_OUT',
  Aborted: 'ABORTED',
  PendingRedrive: 'PENDING_REDRIVE',
} as const;

export const StateMachineType = { Standard: 'STANDARD', Express: 'EXPRESS' } as const;

function sfnJobOf(job: JobSpec): SfnJob {
  if (job.kind !== SFN_KIND) throw new PermanentStartError(`job ${job.id} is not a Step Functions job`, 'WrongKind');
  return job;
}

const nameOf = (error: unknown) => (error as { name?: string } | null)?.name;

/**
 * Step Functions: StartExecution named after the job id (executionNameOf). For a STANDARD state machine a name is
 * unique for 90 days: a repeated start while the execution is open, with the same input, returns it; after it closed
 * (or with another input) Step Functions answers ExecutionAlreadyExists, and the execution of that name is the job's
 * own earlier one, whose ARN follows from the name. So no second execution can start for one job id.
 *
 * EXPRESS state machines are refused (PermanentStartError 'ExpressWorkflow') before anything starts: their executions
 * are not idempotent by name, DescribeExecution does not know them, and they emit no status events; at most 5 minutes
 * long, they are not what a gate for long jobs is for. The type is asked once per state machine (it cannot change).
 */
export class SfnStarter implements JobStarter {
  readonly kind = SFN_KIND;
  private readonly types = new Map<string, string>();

  constructor(private readonly sfn: SFNClient) {}

  async start(job: JobSpec): Promise<{ executionId: string }> {
    const spec = sfnJobOf(job);
    await this.refuseExpress(spec);
    const name = executionNameOf(spec.id);
    const input = JSON.stringify(spec.input ?? {});
    try {
      const { executionArn } = await this.sfn.send(new StartExecutionCommand({ stateMachineArn: spec.stateMachineArn, name, input }));
      if (!executionArn) throw new PermanentStartError(`StartExecution ${spec.stateMachineArn} returned no executionArn`, 'NoRunId');
      return { executionId: executionArn };
    } catch (error) {
      if (error instanceof PermanentStartError) throw error;
      if (nameOf(error) === 'ExecutionAlreadyExists') return { executionId: await this.earlierExecution(spec, name) };
      throw startFailure(START_EXECUTION, error, `StartExecution ${spec.stateMachineArn}`);
    }
  }

  /** Gone when the execution does not exist (ExecutionDoesNotExist); another failure throws JobApiError (DESCRIBE_EXECUTION). */
  async status(job: JobSpec, executionId: string): Promise<RunStatus> {
    sfnJobOf(job);
    try {
      const { status } = await this.sfn.send(new DescribeExecutionCommand({ executionArn: executionId }));
      return mapStatus(status);
    } catch (error) {
      return statusFailure(DESCRIBE_EXECUTION, error, `DescribeExecution ${executionId}`);
    }
  }

  async stop(job: JobSpec, executionId: string): Promise<StopResult> {
    sfnJobOf(job);
    try {
      await this.sfn.send(
        new StopExecutionCommand({
          executionArn: executionId,
          error: 'Sluice.Stopped',
          cause: 'stopped by Sluice (past its maximum run time)',
        }),
      );
      return StopResult.Stopped;
    } catch (error) {
      return stopFailure(STOP_EXECUTION, error, `StopExecution ${executionId}`);
    }
  }

  /** The execution a name already belongs to: the job's own, started by an earlier call. */
  private async earlierExecution(spec: SfnJob, name: string): Promise<string> {
    const executionArn = executionArnOf(spec.stateMachineArn, name);
    try {
      await this.sfn.send(new DescribeExecutionCommand({ executionArn }));
      return executionArn;
    } catch (error) {
      // The name is taken but its execution cannot be read now: it exists, so never start another.
      throw new TransientStartError(
        `StartExecution ${spec.stateMachineArn}: ${name} exists but DescribeExecution failed`,
        nameOf(error) ?? 'Error',
        {
          cause: error,
          definite: false,
        },
      );
    }
  }

  private async refuseExpress(spec: SfnJob): Promise<void> {
    let type = this.types.get(spec.stateMachineArn);
    if (type === undefined) {
      try {
        ({ type = StateMachineType.Standard } = await this.sfn.send(
          new DescribeStateMachineCommand({ stateMachineArn: spec.stateMachineArn }),
        ));
      } catch (error) {
        // Nothing was started yet: a refusal here is as definite as one of StartExecution.
        throw startFailure(DESCRIBE_STATE_MACHINE, error, `DescribeStateMachine ${spec.stateMachineArn}`);
      }
      this.types.set(spec.stateMachineArn, type);
    }
    if (type === StateMachineType.Express) {
      throw new PermanentStartError(
        `${spec.stateMachineArn} is an EXPRESS state machine: Sluice gates STANDARD ones (express executions are not idempotent by name and emit no status events)`,
        'ExpressWorkflow',
      );
    }
  }
}

/** The kind's starter on the process's Step Functions client (one attempt: a throttled start must reach Sluice at once). */
export function createStarter(): SfnStarter {
  return new SfnStarter(jobApiClient('sfn', () => new SFNClient({ maxAttempts: 1 })));
}

/** DescribeExecution's status -> RunStatus. PENDING_REDRIVE: a closed execution that a redrive will run again. */
export function mapStatus(status: string | undefined): RunStatus {
  switch (status) {
    case SfnExecutionStatus.Succeeded:
      return RunStatus.Succeeded;
    case SfnExecutionStatus.Failed:
    case SfnExecutionStatus.TimedOut:
    case SfnExecutionStatus.Aborted:
      return RunStatus.Failed;
    case SfnExecutionStatus.Running:
    case SfnExecutionStatus.PendingRedrive:
      return RunStatus.InProgress;
    default:
      return RunStatus.Unknown;
  }
}
