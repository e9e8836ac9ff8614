import { spawn } from 'node:child_process';
import { builtinModules } from 'node:module';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redlock } from '@redlock-console/redlock';
import { freePort } from '../../lib/cluster';
import { bundleServer } from '../../scripts/support/server-bundle';
import { copiesFrom, readDockerfile } from '../support/dockerfile';
import { startRedisNodes, NO_PERSISTENCE, type RedisNode } from '../support/redis-nodes';

// What the Docker image runs (issue 22), run here without Docker: exactly the files the
// Dockerfile's final stage copies from its build stage, started with plain `node` (no tsx, no
// loader hook) on masters given by REDLOCK_NODES, with every file of the image left unwritten
// (a read-only root filesystem works). node_modules is this repository's; that the image's
// production-only install suffices is checked on the bundle's imports.

const root = process.cwd();
const KEY = 'bundle-key-0123456789abcdef0123';
const stages = readDockerfile();
const final = stages.at(-1)!;

let app: string;
let data: string;
let nodes: RedisNode[] = [];

/** The image's /app: the final stage's COPY --from=build lines, applied to this checkout's build. */
function assembleImage(into: string): void {
  const buildRun = stages
    .find((s) => s.name === 'build')!
    .instructions.find((i) => i.op === 'RUN' && i.args.includes('scripts/build.ts'))!.args;
  const removed = (/rm -rf (.*)$/.exec(buildRun)?.[1] ?? '').split(/\s+/).filter(Boolean);
  for (const { sources, dest } of copiesFrom(final, 'build')) {
    for (const source of sources.map((s) => s.replace(/^\/app\//, ''))) {
      const target =
        dest.endsWith('/') || sources.length > 1 || dest === './' ? join(into, dest, source.split('/').pop()!) : join(into, dest);
      mkdirSync(dirname(target), { recursive: true });
      cpSync(join(root, source), target, {
        recursive: true,
        verbatimSymlinks: true,
        filter: (path) => !removed.includes(relative(root, path)),
      });
    }
  }
  symlinkSync(join(root, 'node_modules'), join(into, 'node_modules'));
}

/** Every file under `dir` (not following node_modules) with its size and modification time. */
function snapshot(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const visit = (path: string) => {
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      const full = join(path, entry.name);
      if (full === join(dir, 'node_modules')) continue;
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

beforeAll(async () => {
  expect(existsSync(join(root, '.next', 'BUILD_ID')), 'needs the console build: node --import tsx scripts/build.ts').toBe(true);
  await bundleServer(root);
  app = mkdtempSync(join(tmpdir(), 'redlock-image-'));
  data = mkdtempSync(join(tmpdir(), 'redlock-image-data-'));
  assembleImage(app);
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
  rmSync(app, { recursive: true, force: true });
  rmSync(data, { recursive: true, force: true });
});

describe('the production bundle (the Docker image)', () => {
  it('imports only Node built-ins and production dependencies: no tsx, no devDependencies', () => {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { dependencies: Record<string, string> };
    for (const file of ['start.mjs', 'console-server.mjs']) {
      const code = readFileSync(join(app, 'dist', 'server', file), 'utf8');
      const specifiers = [...code.matchAll(/(?:^|\n)\s*import\s[^'"]*?["']([^'"]+)["']/g)].map((m) => m[1]!);
      const bare = specifiers.filter((s) => !s.startsWith('.') && !s.startsWith('/'));
      expect(bare.length).toBeGreaterThan(3);
      for (const s of bare) {
        const name = s.startsWith('@') ? s.split('/').slice(0, 2).join('/') : s.split('/')[0]!;
        const builtin = s.startsWith('node:') || builtinModules.includes(name);
        expect(builtin || name in pkg.dependencies || name === 'redis-parser', `${file} imports ${s}`).toBe(true);
      }
      expect(code).not.toMatch(/["']tsx["']|server-only-hook/);
    }
  });

  it('starts with plain node on external masters, serves the lock service and the pages, stops cleanly, and writes nothing in the image', async () => {
    const before = snapshot(app);
    const port = await freePort();
    const child = spawn(process.execPath, ['dist/server/start.mjs'], {
      cwd: app,
      env: {
        PATH: process.env.PATH,
        HOME: data,
        NODE_ENV: 'production',
        NODE_OPTIONS: '',
        PORT: String(port),
        HOST: '127.0.0.1',
        REDLOCK_DATA_DIR: data,
        REDLOCK_NODES: nodes.map((n) => n.url).join(','),
        REDLOCK_API_KEYS: `bundle=${KEY}`,
        REDLOCK_ADMIN_USER: 'operator',
        REDLOCK_ADMIN_PASSWORD: 'operator-password-1234',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    try {
      const deadline = Date.now() + 60_000;
      while (!/redlock-console is ready/.test(out)) {
        if (child.exitCode !== null) throw new Error(`exited early:\n${out}`);
        if (Date.now() > deadline) throw new Error(`not ready in 60 s:\n${out}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      const base = `http://127.0.0.1:${port}`;
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
      const page = await fetch(`${base}/login`);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-security-policy')).toMatch(/script-src 'self' 'nonce-/);
      expect(await page.text()).toContain('<html');
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    expect(out).not.toMatch(/\berror\b/i);
    expect(snapshot(app)).toEqual(before);
  }, 90_000);
});
