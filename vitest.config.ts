import { fileURLToPath } from 'node:url';
import { configDefaults, defineConfig } from 'vitest/config';

/** Test files that measure the lock service's latency under an attack against its own calm baseline. */
export const LATENCY_UNDER_ATTACK = ['test/integration/security-login-flood.test.ts', 'test/integration/security-connections.test.ts'];
const ALONE = process.env.VITEST_ALONE === '1';

export default defineConfig({
  resolve: {
    // The lock core by its package name, from source (as tsconfig.json's paths do for tsc, tsx and Next).
    alias: [
      { find: /^@redlock-console\/redlock$/, replacement: fileURLToPath(new URL('./packages/redlock/src/index.ts', import.meta.url)) },
      {
        find: /^@redlock-console\/redlock\/internals$/,
        replacement: fileURLToPath(new URL('./packages/redlock/src/internals.ts', import.meta.url)),
      },
      {
        find: /^@redlock-console\/redlock\/vocabulary$/,
        replacement: fileURLToPath(new URL('./packages/redlock/src/vocabulary.ts', import.meta.url)),
      },
      { find: /^@\//, replacement: fileURLToPath(new URL('./', import.meta.url)) },
      { find: /^server-only$/, replacement: fileURLToPath(new URL('./test/support/empty.ts', import.meta.url)) },
    ],
  },
  test: {
    // VITEST_ALONE=1: only the tests that compare latencies within one run (an attack against the
    // lock service's p50), one file at a time — scripts/test.sh runs them as a tier of their own
    // after the others: beside another test file, that file's CPU decided the ratio (a clean-clone
    // CI run read 3.05× for a bound of 2×, against the 10× and more these tests exist to catch).
    include: ALONE ? LATENCY_UNDER_ATTACK : ['test/**/*.test.ts', 'test/**/*.test.tsx', 'packages/*/test/**/*.test.ts'],
    exclude: ALONE ? configDefaults.exclude : [...configDefaults.exclude, ...LATENCY_UNDER_ATTACK],
    ...(ALONE ? { fileParallelism: false } : {}),
    // Integration tests spawn real redis-server processes on ports of their own; forks keep
    // each file's processes and signal handlers isolated from the others.
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Never retry: a flaky test is a bug to fix, not to hide.
    retry: 0,
  },
});
