import { isJobKind, kindOf } from '../kinds/registry';

/**
 * The page of a job's run in the AWS console, by its kind's definition (consoleUrl); undefined for a kind that has no
 * such page, a kind this Sluice does not know, or a spec its kind cannot read (a record written by another version).
 */
export function consoleUrlOf(kind: string, spec: unknown, runId: string, region: string): string | undefined {
  if (!isJobKind(kind) || !spec || typeof spec !== 'object') return undefined;
  try {
    return kindOf(kind).consoleUrl?.(spec as never, runId, region);
  } catch {
    return undefined;
  }
}
