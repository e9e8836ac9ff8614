import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The console's root directory (the one holding its package.json), found from a module's URL by
 * walking up. The server entry points run from two places: as sources (scripts/*.ts through tsx,
 * `npm start`) and as the production bundle (dist/server/*.mjs, the Docker image), which sit at
 * different depths below the root.
 */
export function appRoot(moduleUrl: string): string {
  let dir = dirname(fileURLToPath(moduleUrl));
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'redlock-console') return dir;
    const up = dirname(dir);
    if (up === dir) throw new Error(`no redlock-console package.json above ${fileURLToPath(moduleUrl)}`);
    dir = up;
  }
}
