import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * A callback job's completion token, which is also its run id (the ledger's executionId): `cb1.<mac>.<job id>`, where
 * mac is HMAC-SHA256(secret, "sluice-callback\0" + job id) in base64url (43 characters).
 *
 * - Deterministic per job: a repeated start (the start is at least once) sends the same token, so one job has one run.
 * - Unguessable without the secret: a forged token fails the MAC, checked before anything is read or written.
 * - Self-describing: the job id inside lets the check run with no lookup; a token of a finished job is a replay and
 *   finds the job done (it changes nothing).
 *
 * Job ids are 1-128 characters of `A-Za-z0-9._:-`, so a token is at most 176 characters of URL-, JSON- and shell-safe
 * text. A job id is unique for the ledger's retention (30 days): a token stays valid for its job id, so an id used again
 * after that would share it; rotating the secret (README, callback kind) voids every token given out.
 */
export const TOKEN_PREFIX = 'cb1';
const MAC_LENGTH = 43;
const TOKEN = /^cb1\.([A-Za-z0-9_-]{43})\.([A-Za-z0-9][A-Za-z0-9._:-]{0,127})$/;
const CONTEXT = 'sluice-callback\0';

const macOf = (secret: string, jobId: string): string =>
  createHmac('sha256', secret)
    .update(CONTEXT + jobId)
    .digest('base64url');

/** The token of a job's run. */
export function tokenOf(secret: string, jobId: string): string {
  if (secret.length === 0) throw new Error('the callback token secret is empty');
  return `${TOKEN_PREFIX}.${macOf(secret, jobId)}.${jobId}`;
}

/** The job id a token was made for, or undefined for anything that is not a token made with this secret. */
export function verifyToken(secret: string, token: unknown): string | undefined {
  if (typeof token !== 'string') return undefined;
  const match = TOKEN.exec(token);
  if (!match || secret.length === 0) return undefined;
  const [, mac, jobId] = match as unknown as [string, string, string];
  const expected = Buffer.from(macOf(secret, jobId));
  const given = Buffer.from(mac);
  return given.length === MAC_LENGTH && timingSafeEqual(given, expected) ? jobId : undefined;
}

/** The job id in a token's text, unchecked (for logs and the simulator): undefined if it does not look like a token. */
export function jobIdInToken(token: string): string | undefined {
  return TOKEN.exec(token)?.[2];
}
