import path from 'node:path';
import { type JobSpec, KINDS } from '../../shared/kinds/registry';
import type { SimRun } from './model';
import type { SimulatedKind } from './simulatedKind';

const KINDS_DIR = path.resolve(__dirname, '../../shared/kinds');

/**
 * The simulated service of every registered kind: `shared/kinds/<kind>/simulator.ts`, found by that convention (local
 * code only, so the functions' bundles never carry a simulator).
 */
export function simulatedKinds(): SimulatedKind[] {
  loaded ??= KINDS.map((definition) => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const module = require(path.join(KINDS_DIR, definition.kind, 'simulator')) as { simulated?: SimulatedKind };
    if (module.simulated?.kind !== definition.kind) {
      throw new Error(`shared/kinds/${definition.kind}/simulator.ts must export \`simulated\`, the ${definition.kind} service`);
    }
    return module.simulated;
  });
  return loaded;
}

let loaded: SimulatedKind[] | undefined;

/** The Sluice job a simulated run belongs to (AppFlow's client token `sluice-<id>`, Glue's `--sluice-job-id`, ...). */
export function jobIdOfRun(run: Pick<SimRun, 'kind' | 'clientToken' | 'args' | 'executionId'>): string | undefined {
  return simulatedKinds()
    .find((k) => k.kind === run.kind)
    ?.jobIdOf(run);
}

/** The name the simulator knows a job's run by (its flow, Glue job, state machine, ...): the last part of its kind's target. */
export function simNameOf(spec: JobSpec): string {
  return KINDS.find((k) => k.kind === spec.kind)!
    .target(spec as never)
    .split(':')
    .pop()!;
}
