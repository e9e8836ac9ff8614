import { defineConfig } from 'vitest/config';
import base from './vitest.config';

// The lock core's own unit and integration tests (real redis-server), for mutation testing
// (stryker.config.mjs, scripts/mutation/lua-mutants.ts). pack.test.ts builds and packs the package
// with tsup: it tests the packaging, not the behaviour of packages/redlock/src, and is left out.
// (Not mergeConfig: it would append these globs to the base's, which include every test.)
// MUTATION_TESTS=redlock-quorum,redlock-release narrows the run to those files (a quick pass over
// small files; a StrykerJS dry run of every file takes minutes and meets more timing flakes on a
// loaded machine).
const only = (process.env.MUTATION_TESTS ?? '').split(',').filter(Boolean);
// MUTATION_TEST_NAME: a test-name pattern (vitest's testNamePattern), e.g. to leave out a stress test
// that outruns its timeout on a loaded machine unmutated: '^(?!.*many clients, one resource)'.
const testNamePattern = process.env.MUTATION_TEST_NAME ? new RegExp(process.env.MUTATION_TEST_NAME) : undefined;
const include = only.length > 0 ? only.map((name) => `packages/redlock/test/**/${name}.test.ts`) : ['packages/redlock/test/**/*.test.ts'];

export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include,
    ...(testNamePattern ? { testNamePattern } : {}),
    exclude: ['**/node_modules/**', 'packages/redlock/test/integration/pack.test.ts'],
  },
});
