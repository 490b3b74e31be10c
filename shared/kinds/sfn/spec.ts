import { createHash } from 'node:crypto';
import * as z from 'zod';
import { base } from '../../domain/job';

export const SFN_KIND = 'sfn';

/** arn:<partition>:states:<region>:<account>:stateMachine:<name> (a version or alias ARN adds `:<qualifier>`). */
const STATE_MACHINE_ARN = /^arn:aws[a-z-]*:states:[a-z0-9-]+:\d{12}:stateMachine:[A-Za-z0-9_-]{1,80}(:[A-Za-z0-9_-]{1,128})?$/;

/**
 * A Step Functions execution of a STANDARD state machine. `input` is any JSON value, sent as the execution's input
 * (Step Functions takes at most 256 KB; a job message is capped at 64 KB anyway).
 */
export const SfnJobSchema = z
  .object({
    ...base,
    kind: z.literal(SFN_KIND),
    stateMachineArn: z
      .string()
      .regex(STATE_MACHINE_ARN, 'stateMachineArn must be a state machine ARN (arn:aws:states:REGION:ACCOUNT:stateMachine:NAME)'),
    input: z.json().optional(),
  })
  .strict();

export type SfnJob = z.infer<typeof SfnJobSchema>;

/** Execution names: 1-80 characters, no whitespace, brackets, wildcards or `"#%\^|~`$&,;:/` (so no `:` either). */
const PLAIN_NAME = /^[A-Za-z0-9._-]{1,73}$/;

/**
 * The execution name of a job: `sluice-<id>` when the id is a valid name that fits, else `sluiceh-` and 40 hex digits
 * of its SHA-256 (ids may hold `:` and be 128 long; execution names may not). The two prefixes cannot meet, so two job
 * ids never share a name, and one job id always gets the same one: that makes StartExecution idempotent for it.
 */
export function executionNameOf(jobId: string): string {
  return PLAIN_NAME.test(jobId) ? `sluice-${jobId}` : `sluiceh-${createHash('sha256').update(jobId).digest('hex').slice(0, 40)}`;
}

/** Every execution Sluice starts has a name with this prefix (the releaser's rule matches only those). */
export const EXECUTION_NAME_PREFIX = 'sluice';

/** The ARN of a state machine's execution of that name (what StartExecution returns for it). */
export function executionArnOf(stateMachineArn: string, executionName: string): string {
  const [arn] = /^arn:[^:]+:states:[^:]+:\d{12}:stateMachine:[^:]+/.exec(stateMachineArn) ?? [stateMachineArn];
  return `${arn.replace(':stateMachine:', ':execution:')}:${executionName}`;
}
