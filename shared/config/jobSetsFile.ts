import { readFileSync } from 'node:fs';
import path from 'node:path';
import { type JobSet, parseJobSets } from '../domain/jobSets';

/** The job sets of a file (relative paths from the working directory: the repository, or a function's root). */
export function loadJobSets(file: string): JobSet[] {
  const resolved = path.resolve(file);
  return parseJobSets(readFileSync(resolved, 'utf8'), file);
}
