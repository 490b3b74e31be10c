import type { JobSpec } from '../domain/job';
import { JobSpecSchema } from '../kinds/registry';
import { InvalidJobError } from '../errors';
import { describeIssues } from '../domain/zodIssues';

/**
 * SQS's own limit is 1 MiB (since August 2025; 256 KiB before:
 * https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/quotas-messages.html); a job spec is a
 * few hundred bytes, so anything near this cap is a mistake.
 */
export const MAX_JOB_BYTES = 64 * 1024;

/**
 * Turns a message body into a job spec, or throws InvalidJobError saying exactly what is wrong. A message without an
 * `id` gets `fallbackId` (the SQS message id, stable across redeliveries of that message).
 */
export function parseJob(body: string, fallbackId: string): JobSpec {
  const bytes = Buffer.byteLength(body, 'utf8');
  if (bytes > MAX_JOB_BYTES) throw new InvalidJobError(`message is ${bytes} bytes; a job spec may be at most ${MAX_JOB_BYTES}`);
  let raw: unknown;
  try {
    raw = JSON.parse(body);
  } catch (error) {
    throw new InvalidJobError(`message is not JSON: ${(error as Error).message}`, { cause: error });
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new InvalidJobError(`message must be a JSON object, got ${Array.isArray(raw) ? 'an array' : raw === null ? 'null' : typeof raw}`);
  }
  const withId = 'id' in raw ? raw : { ...raw, id: fallbackId };
  const parsed = JobSpecSchema.safeParse(withId);
  if (!parsed.success) throw new InvalidJobError(`invalid job: ${describeIssues(parsed.error, '(message)')}`, { cause: parsed.error });
  return parsed.data;
}
