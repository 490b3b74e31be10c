import { encodeJobBody } from '../domain/jobBody';
import { JobSpecSchema, type JobSpec } from '../kinds/registry';
import { InvalidJobError } from '../errors';
import { describeIssues } from '../domain/zodIssues';

/**
 * The largest job spec Sluice takes, in UTF-8 bytes. SQS takes messages of up to 1 MiB, body and attributes (since
 * August 2025; 256 KiB before: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/quotas-messages.html);
 * a job spec is a few hundred bytes, so anything near this is a mistake. Both the body delivered and the job's body as Sluice
 * writes it (encodeJobBody: its defaults, `pool` and `id`, filled in) must fit: every body Sluice sends again (a
 * retry, a wake-up, the reconciler's and the loader's copies) is that encoding, so a job that was taken always fits on
 * every later delivery and is never refused while it holds a slot.
 */
export const MAX_JOB_BYTES = 64 * 1024;

/**
 * Turns a message body into a job spec, or throws InvalidJobError saying exactly what is wrong. A message without an
 * `id` gets `fallbackId` (the SQS message id, stable across redeliveries of that message). What the stage lets in is
 * checked next (admission.ts).
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
  const encoded = Buffer.byteLength(encodeJobBody(parsed.data), 'utf8');
  if (encoded > MAX_JOB_BYTES)
    throw new InvalidJobError(
      `job is ${encoded} bytes with its defaults filled in (pool, id), as Sluice sends it again; a job spec may be at most ${MAX_JOB_BYTES}`,
    );
  return parsed.data;
}
