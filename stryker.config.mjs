// StrykerJS over the lock core's safety paths: `npm run mutation` (docs/mutation.md).
// Not part of `npm test`: a full run takes long; incremental mode keeps reports/stryker-incremental.json
// so that a rerun after a small change tests only the mutants and tests that changed.
import { SAFETY_TS } from './scripts/mutation/safety-files.mjs';

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
const config = {
  packageManager: 'npm',
  testRunner: 'vitest',
  // The core's unit and integration tests only, one file at a time in a worker thread
  // (StrykerJS 9's vitest runner forces pool threads and maxWorkers 1 per Stryker worker). Integration tests start real redis-servers.
  vitest: { configFile: 'vitest.mutation.config.ts' },
  checkers: ['typescript'],
  tsconfigFile: 'tsconfig.mutation.json',
  typescriptChecker: { prioritizePerformanceOverAccuracy: true },
  // Per-test coverage: a mutant runs only the tests that reached its code.
  coverageAnalysis: 'perTest',
  incremental: true,
  incrementalFile: 'reports/stryker-incremental.json',
  mutate: SAFETY_TS,
  // Shared 2-core machine: one test runner, one checker. Override with --concurrency.
  concurrency: 1,
  // Integration tests wait on real timeouts (quarantines, node timeouts): a mutant that makes one
  // hang is a timeout (counted as detected), not a slow run.
  timeoutMS: 20_000,
  timeoutFactor: 2,
  reporters: ['html', 'json', 'clear-text', 'progress'],
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
  ignorePatterns: [
    '.next*',
    'e2e',
    'chaos/tmp',
    'chaos/reports',
    'bench/tmp',
    'reports',
    '.data',
    'test-results',
    'playwright-report*',
    '.scratch',
  ],
};

export default config;
