import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

// `npm ci` refuses a lock whose optional platform packages are missing (see scripts/lockfile-platforms.mjs).
describe('package-lock.json', () => {
  it('has an entry for every optional dependency edge, so npm ci accepts it on a fresh machine', () => {
    const lock = JSON.parse(readFileSync('package-lock.json', 'utf8')) as {
      packages: Record<string, { optionalDependencies?: Record<string, string> }>;
    };
    const missing: string[] = [];
    for (const [path, entry] of Object.entries(lock.packages)) {
      for (const name of Object.keys(entry.optionalDependencies ?? {})) {
        let dir = path;
        let found = false;
        for (;;) {
          if (lock.packages[`${dir ? `${dir}/` : ''}node_modules/${name}`]) {
            found = true;
            break;
          }
          if (!dir) break;
          const cut = dir.lastIndexOf('/node_modules/');
          dir = cut >= 0 ? dir.slice(0, cut) : '';
        }
        if (!found) missing.push(`${name} (needed by ${path || 'the root'})`);
      }
    }
    expect(missing, 'run: node scripts/lockfile-platforms.mjs').toEqual([]);
  });
});
