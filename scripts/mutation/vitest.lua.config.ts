import { basename } from 'node:path';
import type { TestSpecification } from 'vitest/node';
import { defineConfig } from 'vitest/config';
import mutation from '../../vitest.mutation.config';

// The Lua mutant runs (lua-mutants.ts): vitest.mutation.config.ts with the test files run in the
// order given in LUA_TEST_ORDER (test file names, the order of lua-tests.ts: the pointed tests of a
// script first). With --bail 1 a mutant stops at its first failing test, so that order decides how
// long a kill takes; vitest's own order runs the longest files first.
const order = (process.env.LUA_TEST_ORDER ?? '').split(',').filter(Boolean);
const rank = (spec: TestSpecification) => {
  const i = order.indexOf(basename(spec.moduleId).replace(/\.test\.ts$/, ''));
  return i < 0 ? order.length : i;
};

class ListedOrder {
  async shard(files: TestSpecification[]) {
    return files;
  }
  async sort(files: TestSpecification[]) {
    return [...files].sort((a, b) => rank(a) - rank(b));
  }
}

export default defineConfig({
  ...mutation,
  test: { ...mutation.test, sequence: { ...mutation.test?.sequence, sequencer: ListedOrder } },
});
