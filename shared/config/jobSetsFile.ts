import { readFileSync } from 'node:fs';
import path from 'node:path';
import { type JobSet, parseJobSets } from '../domain/jobSets';
import { type JobSpec, JobSpecSchema, kindOf } from '../kinds/registry';

/**
 * A job sets file's text, each job checked as a job message of any kind Sluice has, a job without a key keyed by what
 * it starts (its kind's targetName) where that is its own in the set. Throws InvalidJobSetsError.
 */
export function parseJobSetsText(text: string, source: string): JobSet<JobSpec>[] {
  return parseJobSets(text, source, JobSpecSchema, { targetName: (spec) => kindOf(spec.kind).targetName(spec as never) });
}

/** The job sets of a file (relative paths from the working directory: the repository, or a function's root). */
export function loadJobSets(file: string): JobSet<JobSpec>[] {
  const resolved = path.resolve(file);
  return parseJobSetsText(readFileSync(resolved, 'utf8'), file);
}
