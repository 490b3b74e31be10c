/**
 * SQS accepts only these characters in message bodies and string attributes (#x9 #xA #xD #x20-#xD7FF #xE000-#xFFFD
 * #x10000-#x10FFFF). A lone surrogate (from a string cut between the two halves of a pair) is outside the set.
 */
const NOT_SQS_TEXT = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

/** Replaces every character SQS refuses with U+FFFD, so a send never fails on what a reason or body quotes. */
export function toSqsText(value: string): string {
  // With the u flag, a lone surrogate is one unit of its own and matches the negated class.
  return value.replace(NOT_SQS_TEXT, '\uFFFD');
}

/** The longest prefix of `value` that is at most `maxBytes` in UTF-8, never cutting a character in two. */
export function truncateUtf8(value: string, maxBytes: number): string {
  if (Buffer.byteLength(value, 'utf8') <= maxBytes) return value;
  let bytes = 0;
  let end = 0;
  for (const char of value) {
    const size = Buffer.byteLength(char, 'utf8');
    if (bytes + size > maxBytes) break;
    bytes += size;
    end += char.length;
  }
  return value.slice(0, end);
}
