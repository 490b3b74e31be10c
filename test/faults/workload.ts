import { conformanceOf } from '../../shared/kinds/kindConformance';
import { KINDS } from '../../shared/kinds/registry';
import type { JobSpec } from '../../shared/domain/job';

/**
 * What the fault tests share: a stack per file with pools of its own (test/support/poolStack.ts: runs labelled with their
 * pool, durations from their names), and job specs in that form, of every registered kind in turn: the fault matrix's
 * invariants hold for each kind (one parametrised suite, not a copy per kind).
 */
export { startPoolStack as startFaultStack } from '../support/poolStack';
export { simNameOf } from '../../shared/local/simulators/simulatedKinds';

export type Spec = JobSpec & { pool: string };

/** `count` jobs of `pool`, the kinds in registry order by turns (appflow, glue, sfn, ...), durations from `durationMs(i)`. */
export function jobsFor(pool: string, count: number, durationMs: (i: number) => number, from = 0): Spec[] {
  return Array.from({ length: count }, (_, n) => {
    const i = from + n;
    const name = `${pool}--${i}--${durationMs(i)}ms`;
    const kind = KINDS[i % KINDS.length]!.kind;
    return { ...(conformanceOf(kind).spec(`${pool}-${i}`, name) as JobSpec), pool };
  });
}
