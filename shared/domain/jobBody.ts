import type { JobSpecBase } from './job';

/**
 * What SQS refuses in a message body: anything outside #x9 #xA #xD #x20-#xD7FF #xE000-#xFFFD #x10000-#x10FFFF. With the
 * u flag a lone surrogate is a code point of its own, outside the class, while a well-formed pair is one astral character.
 */
const NOT_SQS_TEXT = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

/** Every match of NOT_SQS_TEXT is one UTF-16 unit (U+FFFE, U+FFFF, a lone surrogate or a control character). */
const asJsonEscape = (char: string): string => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;

/**
 * The SQS message body of a job: its JSON, with every character SQS refuses written as a `\uXXXX` escape. JSON.stringify
 * writes U+FFFE and U+FFFF raw, and SQS rejects the whole message (InvalidMessageContents), so the job could never be
 * sent again. Outside strings JSON is ASCII, so each escape lands inside a string literal and JSON.parse gives back the
 * same spec. For specs without such characters the body is exactly JSON.stringify(spec).
 */
export function encodeJobBody(spec: JobSpecBase): string {
  return encodeSqsJson(spec);
}

/** Any JSON value as an SQS message body, written as encodeJobBody writes a spec (a callback job's start message, say). */
export function encodeSqsJson(value: unknown): string {
  return JSON.stringify(value).replace(NOT_SQS_TEXT, asJsonEscape);
}

/** JSON with keys sorted at every level: two equal specs give the same text whatever their key order. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b))) : v,
  );
}
