/**
 * What the fault tests share: a stack per file with pools of its own (test/support/poolStack.ts: runs labelled with their
 * pool, durations from their names), and job specs in that form, AppFlow and Glue mixed.
 */
export { startPoolStack as startFaultStack } from '../support/poolStack';

export type Spec =
  | { kind: 'appflow'; pool: string; id: string; flowName: string }
  | { kind: 'glue'; pool: string; id: string; jobName: string; arguments: Record<string, string> };

/** `count` jobs of `pool`: every other one Glue, durations from `durationMs(i)`. */
export function jobsFor(pool: string, count: number, durationMs: (i: number) => number, from = 0): Spec[] {
  return Array.from({ length: count }, (_, n) => {
    const i = from + n;
    const name = `${pool}--${i}--${durationMs(i)}ms`;
    return i % 2 === 1
      ? { kind: 'glue', pool, id: `${pool}-${i}`, jobName: name, arguments: { '--day': '2026-11-22' } }
      : { kind: 'appflow', pool, id: `${pool}-${i}`, flowName: name };
  });
}
