import { defineConfig } from 'vitest/config';
import base from './vitest.config';

// The lock core's own unit and integration tests (real redis-server), for mutation testing
// (stryker.config.mjs, scripts/mutation/lua-mutants.ts). pack.test.ts builds and packs the package
// with tsup: it tests the packaging, not the behaviour of packages/redlock/src, and is left out.
// (Not mergeConfig: it would append these globs to the base's, which include every test.)
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: ['packages/redlock/test/**/*.test.ts'],
    exclude: ['**/node_modules/**', 'packages/redlock/test/integration/pack.test.ts'],
  },
});
