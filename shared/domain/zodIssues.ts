import type { z } from 'zod';

/** A zod error as one line: the first five issues, each `path: message` (`root` names an issue of the whole value). */
export function describeIssues(error: z.ZodError, root: string): string {
  return error.issues
    .slice(0, 5)
    .map((issue) => `${issue.path.length ? issue.path.join('.') : root}: ${issue.message}`)
    .join('; ');
}
