import type { ScenarioOptions } from './scenario';

/**
 * The families of explored scenarios, one test each so that each kind of defect fails on its own with its own schedule:
 * npm test runs a few of each (test/unit/explore/interleavings.test.ts in memory,
 * test/component/explore/adapterInterleavings.test.ts on the DynamoDB adapters), CI's fault step many more
 * (test/faults/explore.slow.test.ts).
 */

/**
 * Every other invocation holds one of its writes to a job record (a stall: ./scenario.ts, STALL) until the others have
 * moved the job on, for the rest of its wave or as long as its function's timeout allows: the writes only the version
 * fence refuses. Small scenarios (two waves of at most four steps), so that many run in little time.
 */
export const STALE_WRITERS: ScenarioOptions = { faults: ['stall'], callFaultRarity: 1, limitChanges: false, maxWaves: 2, maxSteps: 4 };

/** In memory: every port call a step. */
export const FAMILIES: Array<[string, ScenarioOptions]> = [
  ['duplicate deliveries, events and throttled starts', { faults: ['throttle'], limitChanges: false }],
  ['starts answered 5xx (the run may have started)', { faults: ['5xx'], limitChanges: false }],
  ['starts with no answer, starts refused for good', { faults: ['no-answer', 'refused'], limitChanges: false }],
  [
    'AppFlow starts with no answer, then refused: jobs given up while a run may be going',
    { faults: ['no-answer', 'refused'], kinds: ['appflow'], limitChanges: false },
  ],
  ['limits lowered, raised and paused while jobs run and wait (no faults)', { faults: [], limitChanges: true, limitWeight: 4 }],
  ['answers lost after the write applied, invocations dying at any call', { faults: ['lost', 'crash'], limitChanges: false }],
  [
    'admissions losing every race for a counter (a burst), with crashes and lost answers',
    { faults: ['contended', 'lost', 'crash'], limitChanges: false },
  ],
  ['everything at once', {}],
  [
    'several limits per job, weights, start rates, priorities and fair turns; keyed limits and pools lowered, raised and paused',
    { faults: [], flowControl: true, limitWeight: 3 },
  ],
  ['several limits per job, weights, start rates, priorities and fair turns, with every fault', { flowControl: true }],
  ['stale writers: writes to job records held while other invocations move the job on', STALE_WRITERS],
];

/** On the DynamoDB adapters against dynalite: every DynamoDB request a step, with DynamoDB's own faults on it. */
export const ADAPTER_FAMILIES: Array<[string, ScenarioOptions]> = [
  [
    'pools with a busy start rate, bursts losing every race for the counter (contention), throttled starts',
    { ratedPools: true, faults: ['contended', 'throttle'], limitChanges: false },
  ],
  [
    'every documented DynamoDB error, answers lost after the write applied, invocations dying at any request',
    { faults: ['dynamo', 'lost', 'crash'], limitChanges: false },
  ],
  ['limits lowered, raised and paused, with every fault', {}],
  ['several limits per job, weights, start rates, priorities and fair turns, with every fault', { flowControl: true }],
  [
    'stale writers: writes to job records held while other invocations move the job on (duplicate deliveries and events, slow invocations, SDK retries)',
    STALE_WRITERS,
  ],
];
