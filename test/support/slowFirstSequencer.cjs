'use strict';
/**
 * Jest's test order (jest.config.ts, testSequencer).
 *
 * Longest file first, so that the workers end together rather than one starting a two-minute file while the others
 * have nothing left. Jest's own sequencer does that from its cache of the last run's times; with no cache (a fresh
 * clone, CI) it starts the largest files first, which put the explorer's file, small and CPU-bound, last: measured
 * here, it began at 297 s of a 423 s run and was the last two minutes alone. A file the cache has no time for takes
 * its time from ESTIMATES; one in neither counts as short. A file that failed last time still runs first (Jest's rule:
 * its news comes soonest).
 *
 * Except CPU_FIRST, which start first whatever the cache says. The longest files but one mostly wait (on timers of
 * compressed time, child processes, a browser): started together, as longest-first did, they left the two cores half
 * idle for the first minute (sampled with ps: 10-11 CPU-seconds used of 21 in each 10 s). The CPU-bound long files
 * (the explorers, the property suites, the DynamoDB Local contract) started beside the longest waiting one use that
 * minute; the other waiting files then overlap the CPU-bound middle of the run.
 */
const path = require('node:path');
const Sequencer = require('@jest/test-sequencer').default;

const ROOT = path.resolve(__dirname, '../..');

/**
 * Seconds each of the long files takes in `npm test` on an idle two-core machine (three at a time). Only the order
 * matters: a renamed or new long file left out starts late, no test changes. Update from Jest's --json output
 * (testResults[].endTime - startTime) when the ranking changes.
 */
const ESTIMATES = {
  'test/component/local/residentStack.test.ts': 73,
  'test/faults/fencing.test.ts': 41,
  'test/component/package/template.test.ts': 38,
  'test/faults/multiTenant.test.ts': 38,
  'test/component/explore/adapterInterleavings.test.ts': 37,
  'test/faults/events.test.ts': 35,
  'test/faults/jobSets.test.ts': 29,
  'test/component/contract/dynamodbLocal.contract.test.ts': 26,
  'test/component/contract/scheduler.property.test.ts': 25,
  'test/unit/app/notBefore.test.ts': 25,
  'test/faults/crashes.test.ts': 22,
  'test/component/local/cliCommands.test.ts': 21,
  'test/component/contract/dynalite.contract.test.ts': 20,
  'test/integration/gate.test.ts': 20,
  'test/integration/lifecycle.test.ts': 19,
  'test/component/poller/sqsPoller.test.ts': 18,
  'test/faults/delivery.test.ts': 17,
  'test/unit/explore/interleavings.test.ts': 16,
  'test/component/app/rateBurst.test.ts': 16,
  'test/unit/app/scheduler.property.test.ts': 15,
  'test/integration/jobSets.test.ts': 15,
  'test/integration/callback.test.ts': 13,
  'test/integration/notBefore.test.ts': 12,
  'test/component/local/crossOrigin.test.ts': 10,
  'test/component/kinds/apiErrors.test.ts': 9,
  'test/integration/functionWorkers.test.ts': 8,
  'test/component/transactions/dynamodbLocal.test.ts': 8,
  'test/component/package/cli.test.ts': 7,
  'test/component/package/stageConfig.test.ts': 7,
  'test/component/simulators/runLookup.test.ts': 7,
  'test/unit/app/jobSets.test.ts': 7,
};

/** Started first, in this order, after any file that failed last time (see above). */
const CPU_FIRST = [
  'test/component/local/residentStack.test.ts', // the longest file: waits on its stack, a browser and the CLI
  'test/component/explore/adapterInterleavings.test.ts',
  'test/unit/explore/interleavings.test.ts',
  'test/component/contract/dynamodbLocal.contract.test.ts',
  'test/component/contract/scheduler.property.test.ts',
  'test/unit/app/scheduler.property.test.ts',
];

const relative = (test) => path.relative(ROOT, test.path).split(path.sep).join('/');

class SlowFirstSequencer extends Sequencer {
  /** Milliseconds, as Jest's cache keeps them: the cache's, else the estimate, else 0 (short). */
  time(test) {
    const cached = super.time(test);
    if (cached != null) return cached;
    const estimate = ESTIMATES[relative(test)];
    return estimate === undefined ? 0 : estimate * 1000;
  }

  sort(tests) {
    const sorted = super.sort(tests);
    const rank = (test) => {
      if (this.hasFailed(test)) return -1;
      const first = CPU_FIRST.indexOf(relative(test));
      return first < 0 ? CPU_FIRST.length : first;
    };
    // Array.prototype.sort is stable: the rest keep super.sort's order (longest first).
    return sorted
      .map((test) => ({ test, rank: rank(test) }))
      .sort((a, b) => a.rank - b.rank)
      .map(({ test }) => test);
  }
}

module.exports = SlowFirstSequencer;
module.exports.ESTIMATES = ESTIMATES;
module.exports.CPU_FIRST = CPU_FIRST;
