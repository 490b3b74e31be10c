import { conformanceOf } from '../../shared/kinds/kindConformance';
import { KINDS, type JobSpec } from '../../shared/kinds/registry';
import type { LocalStack } from '../../local/stack';
import { ALL_DYNAMO_FAULTS, randomFaults } from '../../local/faults/dynamoFaults';
import { type PoolStackOptions, startPoolStack } from '../support/poolStack';

/**
 * What the fault tests share: a stack per file with pools of its own (test/support/poolStack.ts: runs labelled with their
 * pool, durations from their names), and job specs in that form, of every registered kind in turn: the fault matrix's
 * invariants hold for each kind (one parametrised suite, not a copy per kind).
 *
 * Every fault stack's DynamoDB fights back (local/faults/dynamoFaults.ts): writes meeting a transaction in flight
 * are refused, and FAULT_MATRIX_DYNAMO_RATE of the requests get any fault the DynamoDB reference documents, those after
 * which the write applied included (a server error, a lost answer), at most twice in a row on an item; and a quarter
 * of the reads of an index get the answer the same query got up to 2 s before, as an eventually consistent index may
 * answer. Whatever each file injects besides, the invariants must hold through these. SLUICE_FAULT_SEED picks the seed.
 */
export const FAULT_MATRIX_DYNAMO_RATE = 0.03;
export const FAULT_MATRIX_STALE_INDEX_RATE = 0.25;

export function startFaultStack(pools: Record<string, number>, options: PoolStackOptions = {}): Promise<LocalStack> {
  const seed = Number(process.env.SLUICE_FAULT_SEED ?? 20) + Object.keys(pools).join().length;
  return startPoolStack(pools, {
    dynamoFaults: {
      policy: randomFaults({ seed, rate: FAULT_MATRIX_DYNAMO_RATE, faults: ALL_DYNAMO_FAULTS }),
      staleIndexReads: { rate: FAULT_MATRIX_STALE_INDEX_RATE, seed: seed + 1 },
    },
    ...options,
  });
}
export { simNameOf } from '../../local/simulators/simulatedKinds';

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
