import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { isBuildCurrent } from '../../scripts/support/build-state';

// The console's process holds one copy of lib/server: the one its server (scripts/console-server.ts)
// loads. Next.js's server build must hold none of its own, only the shims that import that copy
// (scripts/support/node-copy-loader.mjs, next.config.ts): a module bundled there would be a second
// instance with state of its own and error classes `instanceof` does not recognise.

const root = process.env.REDLOCK_TEST_CONSOLE_ROOT ?? process.cwd();
const distDir = join(root, process.env.NEXT_DIST_DIR || '.next');

/** The sources every source map of Next.js's server output was made from. */
function serverBuildSources(): string[] {
  const sources = new Set<string>();
  for (const file of readdirSync(join(distDir, 'server'), { recursive: true, encoding: 'utf8' })) {
    if (!file.endsWith('.js.map')) continue;
    const map = JSON.parse(readFileSync(join(distDir, 'server', file), 'utf8')) as {
      sources?: string[];
      sections?: { map: { sources: string[] } }[];
    };
    for (const s of map.sources ?? []) sources.add(s);
    for (const section of map.sections ?? []) for (const s of section.map.sources) sources.add(s);
  }
  return [...sources];
}

it('Next.js’s server build holds no module of lib/server, only the shims that import the server’s copy', () => {
  if (!isBuildCurrent(root) && process.env.REDLOCK_TEST_STALE_BUILD !== '1')
    throw new Error('needs a current console build: node --import tsx scripts/build.ts --if-stale (npm test builds first)');
  const sources = serverBuildSources();
  const shims = sources.filter((s) => /(^|\/)lib\/server\/.+\.ts\.js$/.test(s));
  const bundled = sources.filter((s) => /(^|\/)lib\/server\/.+\.ts$/.test(s));
  expect(bundled).toEqual([]);
  // The route handlers' imports of lib/server are there, as shims (the check above is not vacuous).
  expect(shims.some((s) => s.endsWith('lib/server/http/route.ts.js'))).toBe(true);
});
