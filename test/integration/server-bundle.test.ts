import { spawn } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redlock } from '@redlock-console/redlock';
import { freePort } from '../../lib/cluster';
import { isBuildCurrent } from '../../scripts/support/build-state';
import { assembleImage, tracedPackages } from '../../scripts/support/image-files';
import { bundleServer, packageOf } from '../../scripts/support/server-bundle';
import { startRedisNodes, NO_PERSISTENCE, type RedisNode } from '../support/redis-nodes';

// What the Docker image runs, run here without Docker: the files the Dockerfile's final
// stage copies (scripts/support/image-files.ts assembles them for both), with their own
// node_modules (the build's trace, nothing from this checkout's), started with plain `node` — as
// an unprivileged user with no home when the tests run as root — on masters given by
// REDLOCK_NODES; and no file of the image is written (a read-only root filesystem works).

const root = process.cwd();
const KEY = 'bundle-key-0123456789abcdef0123';
/** Never in the image: the dev and test tools, and anything that compiles TypeScript. */
const DEV_ONLY = [
  'tsx',
  'typescript',
  'esbuild',
  'vitest',
  'playwright',
  'playwright-core',
  '@playwright/test',
  'eslint',
  'prettier',
  'tsup',
  '@scalar/api-reference-react',
];

let app: string;
let data: string;
let nodes: RedisNode[] = [];
/** Root runs the image as `nobody` (setpriv), as the image runs as `node`. */
const asNobody = process.getuid?.() === 0 && existsSync('/usr/bin/setpriv');

/** Every file under `dir` with its size and modification time. */
function snapshot(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const visit = (path: string) => {
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      const full = join(path, entry.name);
      if (entry.isDirectory()) visit(full);
      else {
        const s = statSync(full, { throwIfNoEntry: false });
        out.set(relative(dir, full), s ? `${s.size}:${s.mtimeMs}` : 'link');
      }
    }
  };
  visit(dir);
  return out;
}

function runImage(env: Record<string, string>) {
  const command = asNobody ? '/usr/bin/setpriv' : process.execPath;
  const args = ['dist/server/start.mjs'];
  const child = spawn(command, asNobody ? ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, ...args] : args, {
    cwd: app,
    env: {
      PATH: process.env.PATH,
      HOME: '/nonexistent',
      NODE_ENV: 'production',
      PORT: '0',
      HOST: '127.0.0.1',
      REDLOCK_DATA_DIR: data,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return { child, exited, out: () => out };
}

beforeAll(async () => {
  expect(isBuildCurrent(root), 'needs a current console build: node --import tsx scripts/build.ts').toBe(true);
  await bundleServer(root);
  app = mkdtempSync(join(tmpdir(), 'redlock-image-'));
  data = mkdtempSync(join(tmpdir(), 'redlock-image-data-'));
  assembleImage(root, app);
  chmodSync(app, 0o755);
  if (asNobody) chownSync(data, 65534, 65534);
  nodes = await startRedisNodes(() => NO_PERSISTENCE, 3);
  // New masters hold no epoch sentinel: the core keeps them out until an operator marks them clean.
  const core = new Redlock(
    nodes.map((n) => n.url),
    { keyPrefix: 'rl:', maxTtlMs: 60_000 },
  );
  await core.markNodesClean();
  await core.quit();
}, 60_000);

afterAll(async () => {
  await Promise.all(nodes.map((n) => n.stop()));
  for (const dir of [app, data]) if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the production image, assembled and run without Docker', () => {
  it('holds only what runs: no sources, no TypeScript, no dev or test tools; the bundle imports only built-ins and the traced packages', () => {
    expect(readdirSync(app).sort()).toEqual(['.next', 'chaos', 'dist', 'node_modules', 'package.json']);
    const modules = readdirSync(join(app, 'node_modules'));
    for (const name of DEV_ONLY) expect(existsSync(join(app, 'node_modules', name)), name).toBe(false);
    expect(modules).toContain('next');
    const shipped = tracedPackages(root);
    // The three processes, lib/server's modules (Next.js's shims import them) and their shared chunks.
    const files = [...snapshot(join(app, 'dist', 'server')).keys()].filter((f) => f.endsWith('.mjs'));
    expect(files).toEqual(
      expect.arrayContaining(['start.mjs', 'console-server.mjs', 'lock-service-server.mjs', 'lib/server/http/route.mjs']),
    );
    const allBare = new Set<string>();
    for (const file of files) {
      const code = readFileSync(join(app, 'dist', 'server', file), 'utf8');
      const imported = [...code.matchAll(/(?:^|\n)\s*import\s[^'"]*?["']([^'"]+)["']|\bimport\(\s*["']([^'"]+)["']\s*\)/g)].map(
        (m) => m[1] ?? m[2]!,
      );
      const bare = imported.filter((s) => !s.startsWith('.') && !s.startsWith('/'));
      for (const s of bare) {
        allBare.add(s);
        expect(isBuiltin(s) || shipped.has(packageOf(s)), `${file} imports ${s}, which the image does not ship`).toBe(true);
      }
      expect(code).not.toMatch(/["']tsx["']|server-only-hook/);
    }
    expect([...allBare]).toContain('next');
    // No TypeScript anywhere outside node_modules' type declarations.
    const ts = [...snapshot(app).keys()].filter((f) => /\.tsx?$/.test(f) && !f.endsWith('.d.ts') && !f.startsWith('node_modules'));
    expect(ts).toEqual([]);
  });

  it('starts with plain node on external masters, serves the lock service and the pages with their headers, stops cleanly, and writes nothing in the image', async () => {
    const before = snapshot(app);
    const port = await freePort();
    const servicePort = await freePort();
    const run = runImage({
      PORT: String(port),
      REDLOCK_SERVICE_PORT: String(servicePort),
      REDLOCK_NODES: nodes.map((n) => n.url).join(','),
      REDLOCK_API_KEYS: `bundle=${KEY}`,
      REDLOCK_ADMIN_USER: 'operator',
      REDLOCK_ADMIN_PASSWORD: 'operator-password-1234',
    });
    try {
      const deadline = Date.now() + 60_000;
      while (!/redlock-console is ready/.test(run.out())) {
        if (run.child.exitCode !== null) throw new Error(`exited early:\n${run.out()}`);
        if (Date.now() > deadline) throw new Error(`not ready in 60 s:\n${run.out()}`);
        // poll: until the server logs that it is ready
        await new Promise((r) => setTimeout(r, 100));
      }
      const base = `http://127.0.0.1:${port}`;
      expect((await fetch(`${base}/api/health`)).status).toBe(200);
      expect((await fetch(`${base}/api/ready`)).status).toBe(200);
      const auth = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };
      const grant = await fetch(`${base}/api/locks`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ resource: 'image-1', ttlMs: 5_000 }),
      });
      expect(grant.status, await grant.clone().text()).toBe(200);
      const { token } = (await grant.json()) as { token: string };
      expect(await nodes[0]!.client.exists('rl:lock:image-1')).toBe(1);
      const release = await fetch(`${base}/api/locks/image-1/release`, { method: 'POST', headers: auth, body: JSON.stringify({ token }) });
      expect(release.status).toBe(200);
      // The lock service's own process (the bundle's lock-service-server.mjs) on its port.
      const direct = await fetch(`http://127.0.0.1:${servicePort}/api/locks`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ resource: 'image-2', ttlMs: 5_000 }),
      });
      expect(direct.status, await direct.clone().text()).toBe(200);
      for (const path of ['/login', '/api-reference']) {
        const page = await fetch(`${base}${path}`);
        expect(page.status, path).toBe(200);
        // The nonce CSP (proxy.ts) and next.config.ts's headers, which the image has only as the build wrote them.
        expect(page.headers.get('content-security-policy')).toMatch(/script-src 'self' 'nonce-/);
        expect(page.headers.get('x-frame-options')).toBe('DENY');
        expect(await page.text()).toContain('<html');
      }
    } finally {
      run.child.kill('SIGTERM');
    }
    expect(await run.exited).toBe(0);
    expect(run.out()).not.toMatch(/\berror\b|\bwarn/i);
    expect(snapshot(app)).toEqual(before);
  }, 90_000);

  it('without REDLOCK_NODES, stops at once with one line saying to set it (it cannot run a local cluster)', async () => {
    const run = runImage({ PORT: String(await freePort()) });
    expect(await run.exited).toBe(1);
    expect(run.out().trim()).toMatch(/^error: set REDLOCK_NODES/);
  }, 30_000);
});
