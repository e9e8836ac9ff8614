/**
 * What the Docker image holds, in one place: the Dockerfile's build stage runs
 * `node --import tsx scripts/assemble-image.ts /image` and its final stage copies /image whole;
 * test/integration/server-bundle.test.ts assembles the same files into a temporary directory and
 * runs them. Nothing else reaches the image: no sources, no TypeScript, no tsx, no dev tools.
 *
 * - node_modules: the packages the server needs and nothing else, as Next.js's build traced them
 *   (`output: 'standalone'` → .next/standalone/node_modules): next, react and what they need.
 *   The server bundle imports only those (scripts/support/server-bundle.ts bundles everything
 *   else in: lib/server's packages too, since Next.js's build holds only shims of lib/server).
 * - .next: the build, without its caches, traces and the standalone copy.
 * - dist/server: the server processes and lib/server's modules as plain JavaScript.
 * - chaos/reference: the chaos report the console shows before a run of its own.
 */
import { cpSync, existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join, sep } from 'node:path';

/** Traced by the Next.js build: the only node_modules the image gets. */
export const TRACED_MODULES = join('.next', 'standalone', 'node_modules');

/** Parts of .next the server never reads. */
const NOT_SHIPPED = ['cache', 'standalone', 'trace', 'trace-build', 'diagnostics', 'types', 'redlock-source-hash'].map((p) =>
  join('.next', p),
);

/** Copied as they are (relative to the repository root). */
const SHIPPED = ['package.json', '.next', join('dist', 'server'), join('chaos', 'reference')];

export function assembleImage(root: string, into: string): void {
  for (const required of [join('.next', 'BUILD_ID'), TRACED_MODULES, join('dist', 'server', 'start.mjs')])
    if (!existsSync(join(root, required))) throw new Error(`${required} is missing: run \`npm run build\` first`);
  mkdirSync(into, { recursive: true });
  for (const path of SHIPPED)
    cpSync(join(root, path), join(into, path), {
      recursive: true,
      verbatimSymlinks: true,
      filter: (src) => !NOT_SHIPPED.some((p) => src === join(root, p) || src.startsWith(join(root, p) + sep)),
    });
  cpSync(join(root, TRACED_MODULES), join(into, 'node_modules'), { recursive: true, verbatimSymlinks: true });
}

/** The top-level package names in the traced node_modules (`@scope/name` for scoped ones). */
export function tracedPackages(root: string): Set<string> {
  const dir = join(root, TRACED_MODULES);
  const names = new Set<string>();
  for (const entry of readdirSync(dir)) {
    if (entry.startsWith('.')) continue;
    if (entry.startsWith('@')) for (const sub of readdirSync(join(dir, entry))) names.add(`${entry}/${sub}`);
    else names.add(entry);
  }
  return names;
}
