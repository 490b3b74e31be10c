import { startFailure, stopFailure } from '../../adapters/apiErrors';
import { ConfigurationError, PermanentStartError, TransientStartError } from '../../errors';
import { type JobStarter, RunStatus, type StartOptions } from '../../ports/jobStarter';
import { StopResult } from '../apiErrors';
import { CANCEL_OPERATION, GET_SECRET_VALUE, SEND_OPERATION } from './apiErrors';
import { cancelMessage, startMessage, type TargetMessage } from './messages';
import { tokenKeyring } from './secret';
import type { TargetSender } from './send/sender';
import { CALLBACK_KIND, type CallbackJob, describeTarget, type TargetType, targetOf } from './spec';
import { allowedTargetsFrom, type AllowedTargets, refusedTarget } from './targets';
import { makeToken, runIdOf, tokenExpiry } from './token';
import type { JobSpec } from '../registry';

/** Where the start message tells the user's system to report by SQS (the stage's callback queue). */
export const CALLBACK_QUEUE_URL_ENV = 'CALLBACK_QUEUE_URL';

export interface CallbackStarterOptions {
  senders: Readonly<Record<TargetType, () => Promise<TargetSender>>>;
  /** The key to make tokens with (secret.ts, TokenKeyring.signingKey: the current one, once known for a while). */
  signingKey: () => Promise<string>;
  allowed: AllowedTargets;
  callbackQueueUrl?: string;
  /** epoch ms: a token expires its job's timeout (and a margin) after it is made (default: the system clock) */
  now?: () => number;
}

function callbackJobOf(job: JobSpec): CallbackJob {
  if (job.kind !== CALLBACK_KIND) throw new PermanentStartError(`job ${job.id} is not a callback job`, 'WrongKind');
  return job;
}

/**
 * Callback jobs: the start is a message to the job's target with the job id, its payload, its run id and its token
 * (token.ts: bound to the job, to the run and to an expiry). The run id, a hash of the job id and the run (when its
 * first start call was made), is what Sluice records; the token goes to the target only. A repeated start of one run
 * (told the job may have started, or not) sends the message again for the same run (a token of it made anew) and
 * returns the same run id: the user's system dedupes by job id and run id. There is no API to ask about a run: status
 * is in-progress until the run's report, or its deadline (KindDefinition.runDeadline), ends it. Stop sends a cancel
 * naming the run id.
 */
export class CallbackStarter implements JobStarter {
  readonly kind = CALLBACK_KIND;

  constructor(private readonly options: CallbackStarterOptions) {}

  /** Whether a run may exist changes nothing: the message is sent again for the same run (the system dedupes). */
  async start(job: JobSpec, options?: StartOptions): Promise<{ executionId: string }> {
    const spec = callbackJobOf(job);
    const refused = refusedTarget(spec.target, this.options.allowed);
    if (refused) throw new PermanentStartError(`callback job ${spec.id}: ${refused}`, 'TargetNotAllowed');
    let run: { token: string; runId: string };
    try {
      run = await this.runOf(spec, options);
    } catch (error) {
      throw secretFailure(error, spec.id);
    }
    try {
      await this.send(spec, startMessage(spec, run, this.options.callbackQueueUrl));
    } catch (error) {
      throw startFailure(
        SEND_OPERATION[targetOf(spec.target).type],
        error,
        `start of callback job ${spec.id} at ${describeTarget(spec.target)}`,
      );
    }
    return { executionId: run.runId };
  }

  /**
   * The run id is known before the start (made from the job id and StartOptions.runSince): a job given up after a start of
   * unknown outcome has it recorded, so its system's report (with that run's token) frees the slot (JobStarter.runIdOf).
   */
  async runIdOf(job: JobSpec, options?: StartOptions): Promise<string> {
    return runIdOf(callbackJobOf(job).id, this.runSince(options));
  }

  async status(job: JobSpec, _executionId?: string): Promise<RunStatus> {
    callbackJobOf(job);
    return RunStatus.InProgress;
  }

  /** Sends a cancel naming the run to the job's target (what the user's system does with it is its own). */
  async stop(job: JobSpec, executionId: string): Promise<StopResult> {
    const spec = callbackJobOf(job);
    try {
      await this.send(spec, cancelMessage(spec, executionId, 'stopped by Sluice: past its deadline'));
      return StopResult.Stopped;
    } catch (error) {
      return stopFailure(
        CANCEL_OPERATION[targetOf(spec.target).type],
        error,
        `cancel of callback job ${spec.id} at ${describeTarget(spec.target)}`,
      );
    }
  }

  /**
   * The run's id and a token of it, made now with the signing key: every start call of one run names the same run (its
   * token differs only by its expiry, or its key after a rotation: each is valid).
   */
  private async runOf(spec: CallbackJob, options?: StartOptions): Promise<{ token: string; runId: string }> {
    const run = this.runSince(options);
    const key = await this.options.signingKey();
    const expiresAt = tokenExpiry(this.now(), spec.timeoutSeconds);
    return { token: makeToken(key, { jobId: spec.id, run, expiresAt }), runId: runIdOf(spec.id, run) };
  }

  /** The run a start belongs to (StartOptions.runSince); for a caller that names none, the job's first start, else now. */
  private runSince(options: StartOptions = {}): number {
    return options.runSince ?? options.requestedSince ?? this.now();
  }

  private now(): number {
    return this.options.now ? this.options.now() : Date.now();
  }

  private async send(spec: CallbackJob, message: TargetMessage): Promise<void> {
    const { type, address } = targetOf(spec.target);
    const sender = await this.options.senders[type]();
    await sender.send(address, message, 'detailType' in spec.target ? { detailType: spec.target.detailType } : {});
  }
}

/**
 * The token secret could not be read: nothing was sent, so whatever is not permanent (GET_SECRET_VALUE) is a refusal,
 * tried again with the job's backoff. A secret that is not configured (TokenSecretUnavailable) is retried too: the
 * stage's configuration, not the job, is wrong.
 */
function secretFailure(error: unknown, jobId: string): TransientStartError | PermanentStartError {
  const what = `callback job ${jobId}: reading the token secret`;
  if (error instanceof ConfigurationError) {
    return new TransientStartError(`${what}: ${error.message}`, 'TokenSecretUnavailable', { cause: error, definite: true });
  }
  const failure = startFailure(GET_SECRET_VALUE, error, what);
  return failure instanceof TransientStartError && !failure.definite
    ? new TransientStartError(failure.message, failure.code, { cause: error, definite: true })
    : failure;
}

/** Loads each target's sender (and its SDK) on its first use. */
const lazily = <T>(load: () => Promise<T>): (() => Promise<T>) => {
  let loaded: Promise<T> | undefined;
  return () => (loaded ??= load());
};

/** The kind's starter, configured from the environment serverless.yml gives the functions. */
export function createStarter(env: NodeJS.ProcessEnv = process.env): CallbackStarter {
  return new CallbackStarter({
    senders: {
      sqs: lazily(async () => (await import('./send/sqsSender')).createSqsSender()),
      eventBus: lazily(async () => (await import('./send/eventBusSender')).createEventBusSender()),
      lambda: lazily(async () => (await import('./send/lambdaSender')).createLambdaSender()),
    },
    signingKey: () => tokenKeyring(env).signingKey(),
    allowed: allowedTargetsFrom(env),
    ...(env[CALLBACK_QUEUE_URL_ENV]?.trim() && { callbackQueueUrl: env[CALLBACK_QUEUE_URL_ENV]!.trim() }),
  });
}
