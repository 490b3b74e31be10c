import { type CallbackTarget, type TargetType, targetOf } from './spec';
import { matchesNamePattern } from '../../domain/namePattern';

/**
 * Which targets callback jobs may name: one name pattern per target type (IAM's wildcards, `*` and `?`), the stage
 * parameters allowedCallbackQueuePattern, allowedCallbackBusPattern and allowedCallbackFunctionPattern. The same
 * patterns scope the functions' IAM statements (sqs:SendMessage, events:PutEvents, lambda:InvokeFunction); the starter
 * checks them too, so a job naming another target is dead-lettered with the reason instead of failing on
 * AccessDenied (and locally, where there is no IAM, it is refused all the same).
 */
export const ALLOWED_TARGET_ENV: Readonly<Record<TargetType, string>> = {
  sqs: 'CALLBACK_ALLOWED_QUEUES',
  eventBus: 'CALLBACK_ALLOWED_BUSES',
  lambda: 'CALLBACK_ALLOWED_FUNCTIONS',
};

export type AllowedTargets = Readonly<Record<TargetType, string | undefined>>;

export function allowedTargetsFrom(env: NodeJS.ProcessEnv): AllowedTargets {
  const read = (type: TargetType) => env[ALLOWED_TARGET_ENV[type]]?.trim() || undefined;
  return { sqs: read('sqs'), eventBus: read('eventBus'), lambda: read('lambda') };
}

/** Why the target is not allowed, or undefined when it is. */
export function refusedTarget(target: CallbackTarget, allowed: AllowedTargets): string | undefined {
  const { type, name } = targetOf(target);
  const pattern = allowed[type];
  if (pattern === undefined) return `no ${type} target is allowed (${ALLOWED_TARGET_ENV[type]} is not set)`;
  if (!matchesNamePattern(pattern, name))
    return `${type} target '${name}' is not allowed: names must match '${pattern}' (${ALLOWED_TARGET_ENV[type]})`;
  return undefined;
}
