import * as z from 'zod';

/** A zod error as one line: the first five issues, each `path: message` (`root` names an issue of the whole value). */
export function describeIssues(error: z.ZodError, root: string): string {
  return error.issues
    .slice(0, 5)
    .map((issue) => `${issue.path.length ? issue.path.join('.') : root}: ${issue.message}`)
    .join('; ');
}

/**
 * The message for keys a strict object does not have, each with the known key it most likely meant: the same but for
 * case (`flowname`: `flowName`), else the nearest within a small edit distance (`jobname`, `jobNme`, `jobsName`).
 */
export function unrecognizedKeysMessage(keys: readonly string[], known: readonly string[]): string {
  return keys
    .map((key) => {
      const meant = closestKey(key, known);
      return `Unrecognized key: ${JSON.stringify(key)}${meant ? ` (did you mean ${JSON.stringify(meant)}?)` : ''}`;
    })
    .join('; ');
}

/** The known key `key` most likely meant, or undefined when none is close: case-insensitive equal, else edit distance <= 2. */
export function closestKey(key: string, known: readonly string[]): string | undefined {
  const lower = key.toLowerCase();
  const sameButCase = known.find((k) => k.toLowerCase() === lower);
  if (sameButCase !== undefined) return sameButCase;
  // At most 2 edits, and fewer than half the key's length (`id` is not a typo of `at`).
  const allowed = Math.min(2, Math.floor((key.length - 1) / 2));
  let best: { key: string; distance: number } | undefined;
  for (const candidate of known) {
    const distance = editDistance(lower, candidate.toLowerCase());
    if (distance <= allowed && (!best || distance < best.distance)) best = { key: candidate, distance };
  }
  return best?.key;
}

/** Levenshtein distance (insert, delete, substitute), with adjacent transpositions counted as one edit. */
export function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) rows[0]![j] = j;
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = d;
    }
  return rows[a.length]![b.length]!;
}

/**
 * zod's wording for an unknown key names only the key: with the object's own keys at hand here (the schema that raised
 * it), the message says which key was likely meant; a missing field says so, not "expected string, received undefined".
 * Installed for the process once this module is loaded (everything that reports zod issues to people imports it): zod
 * consults it only for issues no schema words itself.
 */
z.config({
  customError: (issue) => {
    if (issue.code === 'invalid_type' && issue.input === undefined) return `required (${issue.expected})`;
    if (issue.code !== 'unrecognized_keys') return undefined;
    const shape = (issue.inst as { _zod?: { def?: { shape?: Record<string, unknown> } } } | undefined)?._zod?.def?.shape;
    return shape ? unrecognizedKeysMessage(issue.keys, Object.keys(shape)) : undefined;
  },
});
