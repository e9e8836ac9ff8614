import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

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
    include: ['test/**/*.test.ts', 'test/**/*.test.tsx', 'packages/*/test/**/*.test.ts'],
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
