/**
 * The production bundle of the console's two server processes, for the Docker image: plain
 * JavaScript that `node` runs without tsx (no TypeScript compiler at run time, no loader hooks).
 *
 *   dist/server/start.mjs           the supervisor (scripts/start.ts)
 *   dist/server/console-server.mjs  the console's HTTP server: Next.js, the event stream, sign-in
 *   dist/server/lock-service-server.mjs  the lock service (the data plane)
 *   dist/server/lib/server/**.mjs   each module of lib/server, which Next.js's shims import
 *   dist/server/chunks/             the code those share (each module's code is in one file only)
 *
 * Our own modules (lib/, the lock core's sources through tsconfig's paths) and the npm packages the
 * image does not ship are bundled in; the packages it ships (Next.js's trace) stay imports
 * (test/integration/server-bundle.test.ts runs the bundle on exactly those). `server-only`, the marker that
 * throws outside Next.js, becomes an empty module (what scripts/support/server-only-hook.mjs does
 * for tsx). SERVER_BUNDLE_FLAG is true only inside the bundle: the supervisor then starts the
 * bundled console server and expects the Next.js build to be there already.
 */
import { build, type Plugin } from 'esbuild';
import { readdirSync, rmSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { join } from 'node:path';
import { tracedPackages } from './image-files';

export const SERVER_BUNDLE_DIR = join('dist', 'server');
export const SERVER_BUNDLE_ENTRIES = {
  start: 'scripts/start.ts',
  'console-server': 'scripts/console-server.ts',
  'lock-service-server': 'scripts/lock-service-server.ts',
} as const;
/** Replaced by "1" in the bundle (esbuild's define); undefined when the sources run. */
export const SERVER_BUNDLE_FLAG = 'process.env.REDLOCK_SERVER_BUNDLE';

/** `name` or `@scope/name` of an import specifier (`next/dist/x` → `next`). */
export function packageOf(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
}

/**
 * Packages the image ships (traced by the Next.js build: image-files.ts) and Node's built-ins stay
 * imports; everything else — our sources, zod, jose… — is bundled in, so the image needs no
 * node_modules beyond the trace.
 */
function externals(shipped: ReadonlySet<string>): Plugin {
  return {
    name: 'externals',
    setup(b) {
      b.onResolve({ filter: /^server-only$/ }, () => ({ path: 'server-only', namespace: 'empty' }));
      b.onLoad({ filter: /.*/, namespace: 'empty' }, () => ({ contents: 'export {}', loader: 'js' }));
      b.onResolve({ filter: /^[^./]/ }, (args) => {
        const name = packageOf(args.path);
        return args.path.startsWith('node:') || isBuiltin(args.path) || shipped.has(name) ? { path: args.path, external: true } : undefined;
      });
    },
  };
}

/**
 * Every module of lib/server as an entry of its own (dist/server/lib/server/….mjs): Next.js's
 * shims import them (scripts/support/node-copy-loader.mjs), the console's server imports the same
 * code through the shared chunks (esbuild's splitting), so each module is evaluated once.
 */
export function serverModuleEntries(root: string): Record<string, string> {
  const entries: Record<string, string> = {};
  for (const file of readdirSync(join(root, 'lib', 'server'), { recursive: true, encoding: 'utf8' })) {
    if (!file.endsWith('.ts') || file.endsWith('.test.ts')) continue;
    const path = join('lib', 'server', file).split('\\').join('/');
    entries[path.replace(/\.ts$/, '')] = path;
  }
  return entries;
}

export async function bundleServer(root: string): Promise<string[]> {
  const shipped = tracedPackages(root);
  // The chunks' names change with their contents: no chunk of an earlier bundle may stay behind.
  rmSync(join(root, SERVER_BUNDLE_DIR), { recursive: true, force: true });
  const result = await build({
    absWorkingDir: root,
    entryPoints: { ...SERVER_BUNDLE_ENTRIES, ...serverModuleEntries(root) },
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
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
    plugins: [externals(shipped)],
    // CommonJS code bundled into this ES module may call require(): give it one.
    banner: { js: "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);" },
    metafile: true,
    logLevel: 'warning',
  });
  return Object.keys(result.metafile.outputs).filter((f) => f.endsWith('.mjs'));
}
