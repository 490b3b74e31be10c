import type { ServiceDefinition } from '../infra/serviceDefinition';

/** serverless.yml's default function timeout (the framework's), in seconds. */
const DEFAULT_TIMEOUT_SECONDS = 6;

type FunctionDefinition = ServiceDefinition['functions'][string];

/**
 * A function's timeout as the local stack enforces it (real ms).
 *
 * The protocol needs an attempt that claimed a job's start to be dead by the time another may take it over
 * (`claimableAt` = the claim + the start grace): on AWS the start grace (90 s) is longer than the functions that start
 * jobs may run (30 s), and Lambda stops an invocation at its timeout. Locally time is compressed: the start grace is
 * seconds (the `local` stage's START_GRACE_SECONDS), so a function with an event source, the ones that claim starts
 * (the acquirer; the releaser and the callbacks function, which start the job a slot was handed to), is held to it,
 * as AWS holds it to its timeout. Without that, an attempt stalled on a busy machine past the grace but within its 30 s
 * went on and started the job's run a second time (a Glue job, which has no idempotency token).
 */
export function enforcedTimeoutMs(fn: FunctionDefinition, startGraceSeconds: number | undefined): number {
  const timeoutMs = (fn.timeout ?? DEFAULT_TIMEOUT_SECONDS) * 1000;
  const claimsStarts = (fn.events ?? []).some((event) => 'sqs' in event || 'eventBridge' in event);
  if (!claimsStarts || startGraceSeconds === undefined || !(startGraceSeconds > 0)) return timeoutMs;
  return Math.min(timeoutMs, startGraceSeconds * 1000);
}
