import path from 'node:path';
import type { Config } from 'jest';

// Node 20 runs the tests (Lambda runs nodejs22.x): the AWS SDK's 8-line notice that its releases after January 2027
// need Node 22 would print once per worker and child process. Set here, before the workers and children start, so they
// inherit it; SLUICE_SDK_NODE_WARNING=1 lets it through.
if (!process.env.SLUICE_SDK_NODE_WARNING) process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

// Packaging the service (bin/package.cjs, several tests) reuses a function's bundle while its inputs' contents are
// unchanged (bin/serverless/buildCache.cjs): the stages the tests package bundle the same code.
process.env.SLUICE_BUNDLE_CACHE ??= path.join(__dirname, '.sluice', 'bundles');

/** `npm test` leaves out the *.slow.test.ts files; `npm run test:faults` (SLUICE_FAULTS=all, CI's second step) runs them. */
const slowIgnored = process.env.SLUICE_FAULTS === 'all' ? ['/node_modules/'] : ['/node_modules/', '\\.slow\\.test\\.ts$'];

// TypeScript to CommonJS by esbuild (test/support/esbuildTransform.cjs).
const typescript = '<rootDir>/test/support/esbuildTransform.cjs';
// After each file, the AsyncLocalStorage instances its modules used are let go (see the file for why).
const setupFilesAfterEnv = ['<rootDir>/test/support/releaseAsyncStorages.cjs'];

// Unit tests are pure and fast; integration tests share one local stack (emulators + simulators)
// that globalSetup starts in a child process, so they run in their own project.
const config: Config = {
  // Three test files at once on two cores (Jest's default there is one): most of the end-to-end files wait on timers
  // and the emulators rather than the CPU. Measured on this machine: one worker 409 s, two 246 s, three 211 s; the
  // tests are written to pass on a loaded machine, so the third worker's contention changes no outcome.
  maxWorkers: 3,
  // A test's or hook's time limit is a deadline for work, not a claim about speed: property tests, explored schedules
  // and emulator start-ups take a few seconds here, and three or four times that beside a CPU-bound process, past
  // Jest's default of 5 s. (Jest reads it for the whole run, not per project.) Files with longer work set their own.
  testTimeout: 120_000,
  // Longest file first even with no timing cache (a fresh clone, CI): see the sequencer for why.
  testSequencer: '<rootDir>/test/support/slowFirstSequencer.cjs',
  projects: [
    {
      displayName: 'unit',
      testMatch: ['<rootDir>/test/unit/**/*.test.ts'],
      transform: { '^.+\\.ts$': typescript },
      setupFilesAfterEnv,
      testEnvironment: 'node',
    },
    {
      // Tests that start their own servers (emulators in a child process, simulators in process).
      displayName: 'component',
      testMatch: ['<rootDir>/test/component/**/*.test.ts'],
      transform: { '^.+\\.ts$': typescript },
      setupFilesAfterEnv,
      testEnvironment: 'node',
    },
    {
      // The benchmark's smoke run (bench.slow.test.ts, a minute of several processes) runs with the slow fault files.
      displayName: 'integration',
      testMatch: ['<rootDir>/test/integration/**/*.test.ts'],
      testPathIgnorePatterns: slowIgnored,
      transform: { '^.+\\.ts$': typescript },
      setupFilesAfterEnv,
      testEnvironment: 'node',
      globalSetup: '<rootDir>/test/integration/setup/globalSetup.ts',
      globalTeardown: '<rootDir>/test/integration/setup/globalTeardown.ts',
    },
    {
      // Fault injection on the whole local stack (crashes, lost and duplicated events and messages, throttling,
      // write contention, emulator restarts). `npm test` runs the fast files; `npm run test:faults` (SLUICE_FAULTS=all)
      // adds the *.slow.test.ts ones.
      displayName: 'faults',
      testMatch: ['<rootDir>/test/faults/**/*.test.ts'],
      testPathIgnorePatterns: slowIgnored,
      transform: { '^.+\\.ts$': typescript },
      setupFilesAfterEnv,
      testEnvironment: 'node',
      globalSetup: '<rootDir>/test/faults/setup/globalSetup.ts',
      globalTeardown: '<rootDir>/test/faults/setup/globalTeardown.ts',
    },
  ],
};

export default config;
