import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { isBuildCurrent } from '../../scripts/support/build-state';
import type { HistoryResponse } from '../../lib/api/history';
import { METRICS_TOKEN } from '../support/api';
import { CLIENT_AUTH, send, signIn, startConsoleCluster } from '../support/console-server';

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

it('a console process loads each module of lib/server once, and its routes on Node’s objects, Next.js’s route handlers and its instrumentation share their state', async () => {
  const counter = fileURLToPath(new URL('../support/count-server-modules.mjs', import.meta.url));
  const cc = await startConsoleCluster({ nodes: 3 });
  try {
    const proc = await cc.start({ REDLOCK_METRICS_TOKEN: METRICS_TOKEN }, ['--import', counter]);
    // Sign-in and the lock routes are answered on Node's objects (scripts/console-server.ts); the rest by Next.js.
    const operator = await signIn(proc.url, 'operator');
    for (const path of ['/api/nodes', '/api/locks', '/api/audit', '/']) {
      const res = await send(proc.url, 'GET', path, { headers: operator.headers(proc.url) });
      expect(res.status, `${path}: ${res.body.slice(0, 200)}`).toBe(200);
    }
    const acquired = await send(proc.url, 'POST', '/api/locks', { headers: CLIENT_AUTH, body: { resource: 'one-copy', ttlMs: 1_000 } });
    // The body says why when it is not (a 503 once at a load of 12: which nodes could not vote, and why).
    expect(acquired.status, acquired.body.slice(0, 600)).toBe(200);
    // The acquire, counted by the lock core of the server's copy, in the registry Next.js's /api/metrics reads.
    const scrape = await send(proc.url, 'GET', '/api/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(scrape.status).toBe(200);
    expect(scrape.body).toMatch(/^redlock_operations_total\{(?=[^}]*operation="acquire")(?=[^}]*outcome="ok")[^}]*\} 1$/m);
    // The grant counter the instrumentation hook started, seen by Next.js's /api/history.
    const history = await send(proc.url, 'GET', '/api/history', { headers: operator.headers(proc.url) });
    expect((JSON.parse(history.body) as HistoryResponse).grants.counting).toBe(true);
    await proc.kill('SIGTERM');
    const line = /SERVER-MODULES (\{.*\})/.exec(proc.output())?.[1];
    expect(line, proc.output().slice(-2_000)).toBeDefined();
    const counts = JSON.parse(line!) as Record<string, number>;
    // Modules only Next.js's routes import came from Node's loader too.
    expect(Object.keys(counts)).toEqual(expect.arrayContaining(['lib/server/runtime', 'lib/server/inspect-service', 'lib/server/audit']));
    expect(Object.entries(counts).filter(([, n]) => n !== 1)).toEqual([]);
  } finally {
    await cc.stop();
  }
}, 120_000);
