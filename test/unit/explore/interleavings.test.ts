import { explore } from '../../support/explore/run';
import { FAMILIES } from '../../support/explore/families';

/**
 * Explored interleavings: the real services run concurrently on the in-memory ports, and fast-check's scheduler
 * decides when each invocation begins and when each of its port calls takes effect and is answered. Scenarios come from
 * test/support/explore/scenario.ts; the invariants (test/support/explore/invariants.ts) are read from the fake job
 * APIs' record of runs after every step, and from the stores at the end. A failure prints the shrunk scenario and its
 * schedule, call by call, with the command that replays it.
 *
 * One test per family of faults, so that each kind of defect fails on its own with its own schedule. Bounded: RUNS
 * scenarios each, from a fixed seed, unless SLUICE_EXPLORE_RUNS / SLUICE_EXPLORE_SEED say otherwise. CI's fault step
 * explores many more (test/faults/explore.slow.test.ts); `npm run test:explore -- --runs N --seed S` any number.
 */
const RUNS = Number(process.env.SLUICE_EXPLORE_RUNS ?? 100);
const SEED = Number(process.env.SLUICE_EXPLORE_SEED ?? 8);

describe(`explored interleavings (${RUNS} scenarios per family, half as many with flow control; seed ${SEED})`, () => {
  test.each(FAMILIES)(
    '%s',
    async (_name, scenario) => {
      // Flow-control schedules are about twice as long: fewer of them keep npm test within its budget (the first runs
      // of a seed are the same whatever the count; `npm run test:explore -- --flow-control` runs more).
      const runs = scenario.flowControl ? Math.ceil(RUNS / 2) : RUNS;
      const outcome = await explore({ runs, seed: SEED, scenario });
      if (!outcome.ok) throw new Error(`\n${outcome.text}`);
    },
    // CPU-bound: up to 50 s a family beside a CPU hog on two cores; the limit is for a hang, not for speed.
    600_000,
  );
});
