import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_PERSISTENCE, startRedisNodes, type RedisNode } from '@/test/support/redis-nodes';

// The lock core as a user gets it (issue 21): `npm pack` of packages/redlock (prepack builds
// ESM + CJS + declarations), installed with ioredis 6 in an empty directory, then plain Node
// scripts (no tsx, no bundler) take and release fenced locks on three real masters, through a URL
// and through an ioredis 6 client; the exports map hides everything but the entry points; the
// declarations typecheck for an ESM and a CJS consumer under moduleResolution nodenext. The same
// scripts run on the floor of the declared Node range (20.9.0) and on the current LTS lines (22,
// 24): their official binaries come from the npm registry (node-<platform>-<arch>), cached in the
// temporary directory between runs.

const packageDir = join(import.meta.dirname, '..', '..');
const root = join(packageDir, '..', '..');
let work = '';
let nodes: RedisNode[] = [];

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'redlock-pack-'));
  nodes = await startRedisNodes(() => NO_PERSISTENCE, 3);
  execFileSync('npm', ['pack', '--pack-destination', work, '--silent'], { cwd: packageDir, stdio: ['ignore', 'ignore', 'pipe'] });
  const tarball = readdirSync(work).find((f) => f.endsWith('.tgz'))!;
  const app = join(work, 'app');
  execFileSync('mkdir', [app]);
  execFileSync('npm', ['init', '-y'], { cwd: app, stdio: 'ignore' });
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', join(work, tarball), 'ioredis@6'], {
    cwd: app,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
}, 180_000);

afterAll(async () => {
  await Promise.all(nodes.map((n) => n.stop()));
  if (work) rmSync(work, { recursive: true, force: true });
});

const app = () => join(work, 'app');
function runNode(file: string, source: string, node = process.execPath): string {
  writeFileSync(join(app(), file), source);
  return execFileSync(node, [file], { cwd: app(), encoding: 'utf8', timeout: 30_000 }).trim().split('\n').pop()!;
}

/** The official Node binary of `version` (a major or an exact version) for this platform, from the npm registry. */
function nodeBinary(version: string): string {
  const cache = join(tmpdir(), 'redlock-node-binaries', version);
  const bin = join(cache, 'package', 'bin', 'node');
  if (!existsSync(bin)) {
    mkdirSync(cache, { recursive: true });
    const name = execFileSync(
      'npm',
      ['pack', `node-${process.platform}-${process.arch}@${version}`, '--pack-destination', cache, '--silent'],
      { encoding: 'utf8', timeout: 240_000 },
    )
      .trim()
      .split('\n')
      .pop()!;
    execFileSync('tar', ['-xzf', join(cache, name), '-C', cache]);
    rmSync(join(cache, name));
  }
  return bin;
}

const ESM_SCRIPT = (urls: string[], prefix: string) => `
  import { Redlock, isRedlockError } from '@redlock-console/redlock';
  import { Redis } from 'ioredis';
  import { createRequire } from 'node:module';
  // The CommonJS build beside the ESM one (the dual-package case): its errors are still recognised.
  const cjs = createRequire(import.meta.url)('@redlock-console/redlock');
  const dual = [isRedlockError(new cjs.InvalidArgumentError('x', 'y')), new cjs.InvalidArgumentError('x', 'y') instanceof Error, isRedlockError(new Error('x'))];
  const urls = ${JSON.stringify(urls)};
  const byUrl = new Redlock(urls, { keyPrefix: '${prefix}' });
  await byUrl.markNodesClean();
  const a = await byUrl.acquire('invoice-42', 5000);
  const held = await byUrl.acquire('invoice-42', 5000, { retryCount: 0 }).catch((e) => isRedlockError(e) ? e.name : String(e));
  const releasedA = await (await a.release()).settled;
  const clients = urls.map((u) => new Redis(u));
  const byClient = new Redlock(clients, { keyPrefix: '${prefix}' });
  const b = await byClient.acquire('invoice-42', 5000);
  const releasedB = await (await b.release()).settled;
  await byUrl.quit(); await byClient.quit(); clients.forEach((c) => c.disconnect());
  console.log(JSON.stringify({ a: String(a.fence), b: String(b.fence), held, deleted: [releasedA.deleted, releasedB.deleted], node: process.version, dual }));
`;

describe('the packed lock core, installed from its tarball with ioredis 6', () => {
  it('holds only the built files: dist (ESM, CJS, declarations), README and package.json', () => {
    const files = execFileSync(
      'tar',
      [
        '-tzf',
        join(
          work,
          readdirSync(work).find((f) => f.endsWith('.tgz'))!,
        ),
      ],
      { encoding: 'utf8' },
    )
      .trim()
      .split('\n');
    expect(files).toContain('package/dist/index.js');
    expect(files).toContain('package/dist/index.cjs');
    expect(files).toContain('package/dist/index.d.ts');
    expect(files).toContain('package/dist/index.d.cts');
    expect(files).toContain('package/README.md');
    expect(files.filter((f) => !/^package\/(dist\/|README\.md$|package\.json$)/.test(f))).toEqual([]);
  });

  it('a plain-Node ESM script takes and releases a fenced lock on URL nodes and on ioredis 6 clients; fences increase', () => {
    const result = JSON.parse(
      runNode(
        'esm.mjs',
        ESM_SCRIPT(
          nodes.map((n) => n.url),
          'pack-esm:',
        ),
      ),
    ) as { a: string; b: string; held: string; deleted: number[] };
    expect(result.held).toBe('LockContendedError');
    expect(result.deleted).toEqual([3, 3]);
    expect((result as unknown as { dual: boolean[] }).dual).toEqual([true, true, false]);
    expect(BigInt(result.b)).toBeGreaterThan(BigInt(result.a));
    expect(execFileSync(process.execPath, ['-p', "require('ioredis/package.json').version"], { cwd: app(), encoding: 'utf8' })).toMatch(
      /^6\./,
    );
  });

  // engines: >=20.9 (package.json); 22 and 24 are the current LTS lines.
  for (const version of ['20.9.0', '22', '24']) {
    it(`the same ESM script and a CJS require() on Node ${version}`, () => {
      const node = nodeBinary(version);
      const result = JSON.parse(
        runNode(
          `esm-${version}.mjs`,
          ESM_SCRIPT(
            nodes.map((n) => n.url),
            `pack-node-${version}:`,
          ),
          node,
        ),
      ) as { a: string; b: string; held: string; deleted: number[]; node: string };
      expect(result.node.startsWith(`v${version}`)).toBe(true);
      expect(result).toMatchObject({ held: 'LockContendedError', deleted: [3, 3] });
      expect(BigInt(result.b)).toBeGreaterThan(BigInt(result.a));
      const cjs = runNode(
        `cjs-${version}.cjs`,
        `const { Redlock, quorumSize } = require('@redlock-console/redlock'); console.log(JSON.stringify({ q: quorumSize(5), ok: typeof Redlock }));`,
        node,
      );
      expect(JSON.parse(cjs)).toEqual({ q: 3, ok: 'function' });
    }, 300_000);
  }

  it('a CommonJS script require()s it and takes a fenced lock', () => {
    const out = runNode(
      'cjs.cjs',
      `
      const { Redlock } = require('@redlock-console/redlock');
      (async () => {
        const r = new Redlock(${JSON.stringify(nodes.map((n) => n.url))}, { keyPrefix: 'pack-cjs:' });
        await r.markNodesClean();
        const lock = await r.using('job', 5000, async (signal, l) => String(l.fence));
        await r.quit();
        console.log(JSON.stringify({ fence: lock }));
      })();
    `,
    );
    expect(Number(JSON.parse(out).fence)).toBeGreaterThan(0);
  });

  it('the exports map hides the files behind the entry points (no deep imports)', () => {
    const out = runNode(
      'deep.mjs',
      `
      const tries = ['@redlock-console/redlock/dist/index.js', '@redlock-console/redlock/src/index.ts', '@redlock-console/redlock/redlock'];
      const codes = [];
      for (const t of tries) codes.push(await import(t).then(() => 'loaded', (e) => e.code));
      console.log(JSON.stringify(codes));
    `,
    );
    expect(JSON.parse(out)).toEqual(['ERR_PACKAGE_PATH_NOT_EXPORTED', 'ERR_PACKAGE_PATH_NOT_EXPORTED', 'ERR_PACKAGE_PATH_NOT_EXPORTED']);
  });

  it('its declarations typecheck for ESM and CJS consumers (moduleResolution nodenext), and a wrong call does not', () => {
    const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    writeFileSync(
      join(app(), 'check.mts'),
      `
      import { Redlock, type Lock, LockContendedError } from '@redlock-console/redlock';
      const r = new Redlock(['redis://127.0.0.1:6379'], { maxTtlMs: 60_000 });
      const lock: Lock = await r.acquire('x', 1_000, { metadata: { owner: 'me' } });
      const fence: number | null = lock.fence;
      export const e = (err: unknown) => err instanceof LockContendedError && fence;
    `,
    );
    writeFileSync(
      join(app(), 'check.cts'),
      `
      import { Redlock } from '@redlock-console/redlock';
      export const r = new Redlock(['redis://127.0.0.1:6379']);
    `,
    );
    const config = (files: string[]) =>
      JSON.stringify({
        compilerOptions: {
          module: 'nodenext',
          moduleResolution: 'nodenext',
          target: 'es2022',
          strict: true,
          noEmit: true,
          types: ['node'],
          typeRoots: [join(root, 'node_modules', '@types')],
        },
        files,
      });
    writeFileSync(join(app(), 'tsconfig.json'), config(['check.mts', 'check.cts']));
    expect(() => execFileSync(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: app(), encoding: 'utf8' })).not.toThrow();
    writeFileSync(
      join(app(), 'wrong.mts'),
      `
      import { Redlock } from '@redlock-console/redlock';
      await new Redlock(['redis://127.0.0.1:6379']).acquire('x', '1s');
    `,
    );
    writeFileSync(join(app(), 'tsconfig.json'), config(['wrong.mts']));
    let output = '';
    try {
      execFileSync(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: app(), encoding: 'utf8' });
    } catch (e) {
      output = String((e as { stdout?: string }).stdout);
    }
    expect(output).toMatch(/wrong\.mts.*error TS2345/);
    // Two tsc runs: ~20 s on an idle two-core machine, past 30 s on a loaded one.
  }, 120_000);
});
