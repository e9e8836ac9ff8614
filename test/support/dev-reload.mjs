// Run by test/integration/runtime-singleton.test.ts as a process of its own, the way the console's
// server runs (node --import tsx, scripts/console-server.ts): what a `next dev` hot reload does to
// lib/server. Next.js holds, for each module of lib/server, the shim the loader of next.config.ts's
// Turbopack rule makes of it; a reload evaluates the route modules again, and their shims with them.
// Here the server's copy of lib/server/runtime.ts is loaded, then that shim is evaluated twice, as
// two module instances (two reloads). Printed as the last line: whether each reload's getRuntime()
// is the server's runtime, and the connections a master counts before and after.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Redis } from 'ioredis';

const root = process.cwd();
const rel = 'lib/server/runtime';
// As scripts/console-server.ts sets it when it runs the sources.
process.env.REDLOCK_SERVER_MODULES = `${pathToFileURL(root).href}/*.ts`;

const { default: config } = await import(pathToFileURL(join(root, 'next.config.ts')).href);
const rule = Object.values(config.turbopack?.rules ?? {}).find((r) =>
  (r.condition?.all ?? []).some((c) => c.path instanceof RegExp && c.path.test(`${rel}.ts`)),
);
if (!rule) throw new Error('next.config.ts has no Turbopack rule for lib/server: Next.js bundles a copy of its own');
const { default: loader } = await import(pathToFileURL(rule.loaders[0]).href);
const resourcePath = join(root, `${rel}.ts`);
const shim = loader.call({ resourcePath }, readFileSync(resourcePath, 'utf8'));

const connections = async (probe) => Number(/connected_clients:(\d+)/.exec(await probe.info('clients'))[1]);
const probe = new Redis(process.env.REDLOCK_NODES.split(',')[0]);
const server = await import(process.env.REDLOCK_SERVER_MODULES.replace('*', rel));
const runtime = server.getRuntime();
await Promise.all(runtime.clients.map((c) => (c.status === 'ready' ? null : new Promise((ready) => c.once('ready', ready)))));
const before = await connections(probe);

const dir = mkdtempSync(join(tmpdir(), 'redlock-dev-reload-'));
const sameRuntime = [];
try {
  for (const reload of [1, 2]) {
    const file = join(dir, `runtime-shim-${reload}.mjs`);
    writeFileSync(file, shim);
    const evaluated = await import(pathToFileURL(file).href);
    sameRuntime.push(evaluated.getRuntime() === runtime);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
// absence: 100 ms in which a reload's runtime would have opened its connections
await new Promise((r) => setTimeout(r, 100));
const after = await connections(probe);
for (const c of runtime.clients) c.disconnect();
probe.disconnect();
process.stdout.write(`\n${JSON.stringify({ sameRuntime, before, after, shim })}\n`);
