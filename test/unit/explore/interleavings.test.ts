import { explore } from '../../support/explore/run';
import type { ScenarioOptions } from '../../support/explore/scenario';

/**
 * Explored interleavings (issue 8): the real services run concurrently on the in-memory ports, and fast-check's scheduler
 * decides when each invocation begins and when each of its port calls takes effect and is answered. Scenarios come from
 * test/support/explore/scenario.ts; the invariants (test/support/explore/invariants.ts) are read from the fake job
 * APIs' record of runs after every step, and from the stores at the end. A failure prints the shrunk scenario and its
 * schedule, call by call, with the command that replays it.
 *
 * One test per family of faults, so that each kind of defect fails on its own with its own schedule. Bounded: RUNS
 * scenarios each, from a fixed seed, unless SLUICE_EXPLORE_RUNS / SLUICE_EXPLORE_SEED say otherwise (more, and more
 * kinds at once: `npm run test:explore -- --runs N --seed S`).
 */
const RUNS = Number(process.env.SLUICE_EXPLORE_RUNS ?? 250);
const SEED = Number(process.env.SLUICE_EXPLORE_SEED ?? 8);

const FAMILIES: Array<[string, ScenarioOptions]> = [
  ['duplicate deliveries, events and throttled starts', { faults: ['throttle'], limitChanges: false }],
  ['starts answered 5xx (the run may have started)', { faults: ['5xx'], limitChanges: false }],
  ['starts with no answer, starts refused for good', { faults: ['no-answer', 'refused'], limitChanges: false }],
  [
    'AppFlow starts with no answer, then refused: jobs given up while a run may be going',
    { faults: ['no-answer', 'refused'], kinds: ['appflow'], limitChanges: false },
  ],
  ['limits lowered, raised and paused while jobs run and wait (no faults)', { faults: [], limitChanges: true, limitWeight: 4 }],
  ['answers lost after the write applied, invocations dying at any call', { faults: ['lost', 'crash'], limitChanges: false }],
  ['everything at once', {}],
  [
    'several limits per job, weights, start rates, priorities and fair turns; keyed limits and pools lowered, raised and paused',
    { faults: [], flowControl: true, limitWeight: 3 },
  ],
  ['several limits per job, weights, start rates, priorities and fair turns, with every fault', { flowControl: true }],
];

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
