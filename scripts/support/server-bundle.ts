/**
 * The production bundle of the console's two server processes, for the Docker image: plain
 * JavaScript that `node` runs without tsx (no TypeScript compiler at run time, no loader hooks).
 *
 *   dist/server/start.mjs           the supervisor (scripts/start.ts)
 *   dist/server/console-server.mjs  the HTTP server: lock-service fast path + Next.js
 *
 * Our own modules (lib/, the lock core's sources through tsconfig's paths) are bundled in; npm
 * packages stay imports, resolved from node_modules at run time, and must be production
 * dependencies (test/integration/server-bundle.test.ts checks it). `server-only`, the marker that
 * throws outside Next.js, becomes an empty module (what scripts/support/server-only-hook.mjs does
 * for tsx). SERVER_BUNDLE_FLAG is true only inside the bundle: the supervisor then starts the
 * bundled console server and expects the Next.js build to be there already.
 */
import { build, type Plugin } from 'esbuild';
import { join } from 'node:path';

export const SERVER_BUNDLE_DIR = join('dist', 'server');
export const SERVER_BUNDLE_ENTRIES = { start: 'scripts/start.ts', 'console-server': 'scripts/console-server.ts' } as const;
/** Replaced by "1" in the bundle (esbuild's define); undefined when the sources run. */
export const SERVER_BUNDLE_FLAG = 'process.env.REDLOCK_SERVER_BUNDLE';

/** Imports that name a package (not a relative path, not a tsconfig alias of our own sources). */
const ownAliases = /^(@\/|@redlock-console\/redlock(\/|$))/;

const packagesExternal: Plugin = {
  name: 'packages-external',
  setup(b) {
    b.onResolve({ filter: /^server-only$/ }, () => ({ path: 'server-only', namespace: 'empty' }));
    b.onLoad({ filter: /.*/, namespace: 'empty' }, () => ({ contents: 'export {}', loader: 'js' }));
    // Leave npm packages (and node: builtins) to Node at run time; bundle our own sources.
    b.onResolve({ filter: /^[^./]/ }, (args) => (ownAliases.test(args.path) ? undefined : { path: args.path, external: true }));
  },
};

export async function bundleServer(root: string): Promise<string[]> {
  const result = await build({
    absWorkingDir: root,
    entryPoints: SERVER_BUNDLE_ENTRIES,
    outdir: SERVER_BUNDLE_DIR,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: 'linked',
    // Folds the sources-only branches (SERVER_BUNDLE_FLAG is a constant here) away.
    minifySyntax: true,
    tsconfig: 'tsconfig.json',
    define: { [SERVER_BUNDLE_FLAG]: '"1"' },
    plugins: [packagesExternal],
    metafile: true,
    logLevel: 'warning',
  });
  return Object.keys(result.metafile.outputs).filter((f) => f.endsWith('.mjs'));
}
