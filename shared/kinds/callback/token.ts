import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/**
 * A callback run's completion token: `cb2.<mac>.<run>.<expires>.<job id>`, handed to the job's target in its start
 * message and nowhere else.
 *
 * - `run` names the run: when its first start call was made (its record's firstStartAt, ms since the epoch), the same
 *   in every start call of one run (a start is at least once, and its retries resume it); a later run of the same job
 *   id (its record expired, the id sent again) has another, so a token of an earlier run cannot end a later one.
 * - `expires` (seconds since the epoch): when the start call was made, plus the job's timeout, plus
 *   TOKEN_EXPIRY_MARGIN_SECONDS. The run cannot be in progress past it (the reconciler ends it at its timeout); an older
 *   token is refused.
 * - `mac` is HMAC-SHA256(key, "sluice-callback\0cb2\0" + run + "\0" + expires + "\0" + job id) in base64url (43
 *   characters), with the stage's token key: checked before anything is read or written.
 *
 * Sluice does not keep the token: the run id it records and shows (the ledger's executionId, `sluice jobs`, the logs)
 * is a SHA-256 of the token's job id and run, which ends nothing. Not of the whole token: a start call made again for
 * the same run (later, or after a rotation of the key) makes another token, and it must name the same run.
 *
 * Job ids are 1-128 characters of `A-Za-z0-9._:-`, so a token is at most 202 characters of URL-, JSON- and shell-safe
 * text.
 */
export const TOKEN_PREFIX = 'cb2';
/** Run ids: `cbr.` and 43 characters (a SHA-256 in base64url). */
export const RUN_ID_PREFIX = 'cbr';
/**
 * How long past its job's timeout (counted from its start call) a token stays valid: the run's own deadline counts from
 * a moment later (when the run was recorded), and its report may be on its way when the deadline passes.
 */
export const TOKEN_EXPIRY_MARGIN_SECONDS = 3600;

const MAC_LENGTH = 43;
const TOKEN = /^cb2\.([A-Za-z0-9_-]{43})\.(\d{1,15})\.(\d{1,12})\.([A-Za-z0-9][A-Za-z0-9._:-]{0,127})$/;
const RUN_ID = /^cbr\.[A-Za-z0-9_-]{43}$/;
const MAC_CONTEXT = 'sluice-callback\0cb2\0';
const RUN_ID_CONTEXT = 'sluice-callback-run\0';

/** What a token says: the job, the run (its first start call, epoch ms) and when the token expires (epoch ms). */
export interface TokenClaims {
  jobId: string;
  run: number;
  expiresAt: number;
}

export const TokenVerdict = {
  /** made with one of the keys, for this run, and not expired */
  Valid: 'valid',
  /** not a token, or not made with any of the keys (a wrong or changed MAC, a changed claim) */
  Forged: 'forged',
  /** made with a key, but past its expiry */
  Expired: 'expired',
} as const;

export type TokenCheck =
  | { verdict: typeof TokenVerdict.Valid; claims: TokenClaims; runId: string }
  | { verdict: typeof TokenVerdict.Forged }
  | { verdict: typeof TokenVerdict.Expired; claims: TokenClaims; runId: string };

const claimsText = (c: { run: string; expires: string; jobId: string }) => `${c.run}\0${c.expires}\0${c.jobId}`;
const macOf = (key: string, text: string): string =>
  createHmac('sha256', key)
    .update(MAC_CONTEXT + text)
    .digest('base64url');

/** The run id of run `run` (its first start call, epoch ms) of a job: what Sluice records for it. */
export function runIdOf(jobId: string, run: number): string {
  const digest = createHash('sha256')
    .update(`${RUN_ID_CONTEXT}${Math.trunc(run)}\0${jobId}`)
    .digest('base64url');
  return `${RUN_ID_PREFIX}.${digest}`;
}

/** The expiry of a token made at `now` (epoch ms) for a job of this timeout. */
export function tokenExpiry(now: number, timeoutSeconds: number): number {
  return now + (timeoutSeconds + TOKEN_EXPIRY_MARGIN_SECONDS) * 1000;
}

/** The token of a run, made with `key` (the current one). */
export function makeToken(key: string, claims: TokenClaims): string {
  if (key.length === 0) throw new Error('the callback token key is empty');
  const text = { run: String(Math.trunc(claims.run)), expires: String(Math.ceil(claims.expiresAt / 1000)), jobId: claims.jobId };
  return `${TOKEN_PREFIX}.${macOf(key, claimsText(text))}.${text.run}.${text.expires}.${text.jobId}`;
}

/** The token's parts, unchecked; undefined if it does not look like a token. */
function partsOf(token: unknown): { mac: string; run: string; expires: string; jobId: string } | undefined {
  if (typeof token !== 'string') return undefined;
  const match = TOKEN.exec(token);
  if (!match) return undefined;
  const [, mac, run, expires, jobId] = match as unknown as [string, string, string, string, string];
  return { mac, run, expires, jobId };
}

/**
 * Checks a token against the keys (the current one, then the previous one during a rotation) and the clock: pure, no
 * I/O. Forged for anything that is not a token made with one of the keys; a claim of an expiry is trusted only once
 * its MAC checked.
 */
export function checkToken(keys: readonly string[], token: unknown, now: number): TokenCheck {
  const parts = partsOf(token);
  if (!parts) return { verdict: TokenVerdict.Forged };
  const text = claimsText(parts);
  const given = Buffer.from(parts.mac);
  const made = keys.some((key) => {
    if (key.length === 0) return false;
    const expected = Buffer.from(macOf(key, text));
    return given.length === MAC_LENGTH && expected.length === MAC_LENGTH && timingSafeEqual(given, expected);
  });
  if (!made) return { verdict: TokenVerdict.Forged };
  const claims: TokenClaims = { jobId: parts.jobId, run: Number(parts.run), expiresAt: Number(parts.expires) * 1000 };
  const runId = runIdOf(claims.jobId, claims.run);
  return now >= claims.expiresAt ? { verdict: TokenVerdict.Expired, claims, runId } : { verdict: TokenVerdict.Valid, claims, runId };
}

/** The run id of a token (unchecked), or undefined if it does not look like a token. */
export function runIdOfToken(token: string): string | undefined {
  const parts = partsOf(token);
  return parts && runIdOf(parts.jobId, Number(parts.run));
}

/** The job id in a token's text, unchecked (for logs and the CLI): undefined if it does not look like a token. */
export function jobIdInToken(token: string): string | undefined {
  return partsOf(token)?.jobId;
}

/** The expiry a token's text claims (epoch ms), unchecked (the CLI warns of an expired token before sending it). */
export function expiryInToken(token: string): number | undefined {
  const parts = partsOf(token);
  return parts && Number(parts.expires) * 1000;
}

/** Whether a value is a run id as Sluice records and shows it (not a token: it ends nothing). */
export function isRunId(value: string): boolean {
  return RUN_ID.test(value);
}
