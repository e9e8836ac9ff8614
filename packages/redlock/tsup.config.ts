import { defineConfig } from 'tsup';

// ESM and CommonJS, each with its own declarations (index.d.ts / index.d.cts), for Node 20.9+.
// Dependencies (ioredis, redis-parser) stay imports; the Lua scripts are compiled in (scripts/index.ts).
export default defineConfig({
  entry: ['src/index.ts', 'src/vocabulary.ts', 'src/internals.ts'],
  format: ['esm', 'cjs'],
  target: 'node20',
  platform: 'node',
  dts: { compilerOptions: { composite: false, incremental: false } },
  tsconfig: 'tsconfig.build.json',
  clean: true,
  sourcemap: true,
  splitting: true,
});
