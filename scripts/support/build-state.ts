import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const SOURCE_DIRS = ['app', 'components', 'lib', 'packages/redlock/src', 'public'];
const SOURCE_FILES = [
  'package-lock.json',
  'next.config.ts',
  'scripts/support/node-copy-loader.mjs',
  'tsconfig.json',
  'postcss.config.mjs',
  'proxy.ts',
  'instrumentation.ts',
];
const STAMP = 'redlock-source-hash';
const distDir = () => process.env.NEXT_DIST_DIR || '.next';

/** A hash of everything `next build` reads, so a stale build is noticed and rebuilt. */
export function sourceHash(root: string): string {
  const hash = createHash('sha256');
  const visit = (path: string) => {
    if (!existsSync(path)) return;
    if (statSync(path).isDirectory()) {
      for (const entry of readdirSync(path).sort()) visit(join(path, entry));
      return;
    }
    hash.update(relative(root, path)).update('\0').update(readFileSync(path)).update('\0');
  };
  for (const dir of SOURCE_DIRS) visit(join(root, dir));
  for (const file of SOURCE_FILES) visit(join(root, file));
  return hash.digest('hex');
}

export function isBuildCurrent(root: string): boolean {
  const stamp = join(root, distDir(), STAMP);
  return existsSync(join(root, distDir(), 'BUILD_ID')) && existsSync(stamp) && readFileSync(stamp, 'utf8') === sourceHash(root);
}

/** Run `next build` when there is no build for the current sources. Returns whether it built. */
/** `nextBin` is asked for only when a build runs (the image has no Next.js CLI: nothing to build with). */
export function ensureBuild(root: string, nextBin: () => string, log: (line: string) => void): boolean {
  // The production bundle (the Docker image) ships its build and not the sources it came from:
  // there is nothing to compare, and no compiler to build with.
  if (process.env.REDLOCK_SERVER_BUNDLE) {
    if (!existsSync(join(root, distDir(), 'BUILD_ID')))
      throw new Error(`no console build in ${join(root, distDir())}: the image was built without it`);
    return false;
  }
  if (isBuildCurrent(root)) return false;
  log('building the console (no current build found)…');
  const hash = sourceHash(root);
  const result = spawnSync(process.execPath, [nextBin(), 'build'], {
    cwd: root,
    stdio: 'inherit',
    // Collecting page data evaluates the route modules: their lib/server shims import the sources.
    env: {
      ...process.env,
      NEXT_TELEMETRY_DISABLED: '1',
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import tsx --import ./scripts/support/server-only-hook.mjs`.trim(),
    },
  });
  if (result.status !== 0) throw new Error(`next build failed (exit ${result.status ?? result.signal})`);
  writeFileSync(join(root, distDir(), STAMP), hash);
  return true;
}

/** Drop the stamp so the next ensureBuild() builds again. */
export function forgetBuild(root: string): void {
  rmSync(join(root, distDir(), STAMP), { force: true });
}
