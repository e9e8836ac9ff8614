import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { applyPatch, type Mutant } from './mutants';
import type { CoreBuild } from './run-context';

/** Where the lock core's source lives in the repository (the package's src/). */
export function coreSourceDir(projectRoot: string): string {
  return join(projectRoot, 'packages', 'redlock', 'src');
}

/**
 * A script's source with its includes expanded, as scripts/gen-lua.mjs does: a line
 * `--@include _name.lua` is replaced by that snippet (a `_` file, never a script of its own), so a
 * patch in a snippet reaches every script that includes it.
 */
function expandIncludes(dir: string, file: string, seen: ReadonlySet<string> = new Set()): string {
  if (seen.has(file)) throw new Error(`mutant build: include cycle at ${file}`);
  const source = readFileSync(join(dir, file), 'utf8');
  return source.replace(/^--@include (_[\w-]+\.lua)\n/gm, (_, snippet: string) => expandIncludes(dir, snippet, new Set([...seen, file])));
}

/**
 * Regenerate the source and SHA1 of every script in `<core>/scripts/index.ts` from the .lua files
 * beside it (same format and includes as scripts/gen-lua.mjs). A patched script must get its own
 * SHA: EVALSHA of the old one would run the real script, which the nodes already have cached.
 */
export function regenerateScripts(coreDir: string): void {
  const dir = join(coreDir, 'scripts');
  const indexPath = join(dir, 'index.ts');
  let index = readFileSync(indexPath, 'utf8');
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.lua') && !f.startsWith('_'))) {
    const name = file.slice(0, -'.lua'.length);
    const source = expandIncludes(dir, file);
    const sha = createHash('sha1').update(source, 'utf8').digest('hex');
    const block = new RegExp(`(  name: ${escape(JSON.stringify(name))},\\n  sha: )"[0-9a-f]{40}",\\n  source: ".*",\\n`);
    if (!block.test(index)) throw new Error(`mutant build: no entry for ${file} in scripts/index.ts (was scripts/gen-lua.mjs changed?)`);
    index = index.replace(block, (_, head: string) => `${head}${JSON.stringify(sha)},\n  source: ${JSON.stringify(source)},\n`);
  }
  writeFileSync(indexPath, index);
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Copy the core's source (coreSourceDir) to `<buildRoot>/<mutant>/redlock`, apply the mutant's patches (checked), and
 * return the build. The build root gets a node_modules link to the project's, so the copy resolves
 * ioredis like the original.
 */
export function buildMutant(projectRoot: string, buildRoot: string, mutant: Mutant): CoreBuild {
  mkdirSync(buildRoot, { recursive: true });
  const modules = join(buildRoot, 'node_modules');
  if (!existsSync(modules)) symlinkSync(join(projectRoot, 'node_modules'), modules, 'dir');
  const coreDir = join(buildRoot, mutant.name, 'redlock');
  cpSync(coreSourceDir(projectRoot), coreDir, { recursive: true });
  let luaChanged = false;
  for (const patch of mutant.patches) {
    const file = join(coreDir, patch.file);
    writeFileSync(file, applyPatch(readFileSync(file, 'utf8'), patch, mutant.name));
    if (patch.file.endsWith('.lua')) luaChanged = true;
  }
  if (luaChanged) regenerateScripts(coreDir);
  return { name: mutant.name, indexPath: join(coreDir, 'index.ts') };
}
