/**
 * FNV-1a, 32 bits, of a string's UTF-16 code units: a stable, cheap spread of ids over shards. Stored keys are made
 * from it (the due, holders and ended index shards; job-set job ids), so it must never change.
 */
export function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}
