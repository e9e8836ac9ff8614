import { defineConfig } from 'tsup';

// ESM and CommonJS, each with its own declarations (index.d.ts / index.d.cts), for Node 20.9+.
// Dependencies (ioredis, redis-parser) stay imports; the Lua scripts are compiled in (scripts/index.ts).
// No source maps: the output is not minified (names and line structure are the source's), so a
// stack trace into dist/ already reads. The maps were 60 % of the tarball (src/ is not shipped, so
// they must carry the sources in sourcesContent to be of use) and the CommonJS ones carried the
// build machine's absolute path. No declaration maps either: "go to definition" lands on the .d.ts,
// which carries every JSDoc. test/integration/pack.test.ts checks the tarball for both.
export default defineConfig({
  entry: ['src/index.ts', 'src/vocabulary.ts', 'src/internals.ts'],
  format: ['esm', 'cjs'],
  target: 'node20',
  platform: 'node',
  dts: { compilerOptions: { composite: false, incremental: false } },
  tsconfig: 'tsconfig.build.json',
  clean: true,
  sourcemap: false,
  splitting: true,
});
