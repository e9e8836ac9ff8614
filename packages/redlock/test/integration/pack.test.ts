import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join, normalize, relative } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_PERSISTENCE, startRedisNodes, type RedisNode } from '@/test/support/redis-nodes';

// The lock core as a user gets it: `npm pack` of packages/redlock (prepack builds
// ESM + CJS + declarations), checked file by file (no absolute path of this machine anywhere, every
// relative reference of a .d.ts, .js or .map resolves inside the tarball, LICENSE, CHANGELOG and a
// README naming every entry point), then installed in empty directories outside the repository with
// ioredis 5.3.2 (the floor of the peer range), the latest 5 and 6: plain Node ESM and CommonJS
// programs take and release fenced locks on three real masters, through URLs and through clients of
// that ioredis, and a TypeScript program typechecks under moduleResolution node16 and bundler; and
// once more beside node-redis 5 (the client seam's second adapter), the same three programs. The
// exports map hides everything but the entry points. The same scripts run on the floor of the
// declared Node range (20.9.0) and on the current LTS lines (22, 24): their official binaries come
// from the npm registry (node-<platform>-<arch>), cached in the temporary directory between runs.
// Every install of a run lives in one temporary directory (removed after it); npm's own cache and
// --prefer-offline keep a second run off the network; nothing but the npm registry is contacted.

const packageDir = join(import.meta.dirname, '..', '..');
const root = join(packageDir, '..', '..');
/** ioredis versions the tarball is installed with: the peer range's floor, the latest 5, the latest 6. */
const IOREDIS = ['5.3.2', '5', '6'] as const;
/** The node-redis the tarball is installed with (the floor of its optional peer range). */
const NODE_REDIS = '5.12.1';
let work = '';
let tarball = '';
/** What `npm pack --dry-run --json` says the tarball holds (paths relative to the package). */
let dryRunFiles: string[] = [];
let nodes: RedisNode[] = [];
const run = promisify(execFile);

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'redlock-pack-'));
  nodes = await startRedisNodes(() => NO_PERSISTENCE, 3);
  execFileSync('npm', ['pack', '--pack-destination', work, '--silent'], { cwd: packageDir, stdio: ['ignore', 'ignore', 'pipe'] });
  tarball = join(
    work,
    readdirSync(work).find((f) => f.endsWith('.tgz'))!,
  );
  // The same list without building again (prepack just ran).
  const dryRun = JSON.parse(
    execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
      cwd: packageDir,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  ) as Array<{ files: Array<{ path: string }> }>;
  dryRunFiles = dryRun[0]!.files.map((f) => f.path).sort();
  mkdirSync(join(work, 'unpacked'));
  execFileSync('tar', ['-xzf', tarball, '-C', join(work, 'unpacked')]);
  await Promise.all(
    IOREDIS.map(async (version) => {
      const dir = appOf(version);
      mkdirSync(dir);
      writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: `app-ioredis-${version.replaceAll('.', '-')}`, private: true }));
      await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', tarball, `ioredis@${version}`], { cwd: dir });
    }),
  );
  // node-redis 5 beside it (ioredis is still a required peer: URL nodes use the core's own connection,
  // which the package imports from ioredis' parser). @types/node: node-redis' types need it.
  const nodeRedisApp = appOf('node-redis');
  mkdirSync(nodeRedisApp);
  writeFileSync(join(nodeRedisApp, 'package.json'), JSON.stringify({ name: 'app-node-redis', private: true }));
  await run(
    'npm',
    ['install', '--no-audit', '--no-fund', '--prefer-offline', tarball, `redis@${NODE_REDIS}`, 'ioredis@6', '@types/node@20'],
    { cwd: nodeRedisApp },
  );
}, 300_000);

afterAll(async () => {
  await Promise.all(nodes.map((n) => n.stop()));
  if (work) rmSync(work, { recursive: true, force: true });
});

const appOf = (ioredis: string) => join(work, `app-ioredis-${ioredis}`);
const app = () => appOf('6');
function runNode(file: string, source: string, node = process.execPath, dir = app()): string {
  writeFileSync(join(dir, file), source);
  return execFileSync(node, [file], { cwd: dir, encoding: 'utf8', timeout: 30_000 }).trim().split('\n').pop()!;
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
  const byUrl = new Redlock(urls, { keyPrefix: '${prefix}', nodeTimeoutMs: 2000 });
  await byUrl.markNodesClean();
  const a = await byUrl.acquire('invoice-42', 5000);
  const held = await byUrl.acquire('invoice-42', 5000, { retryCount: 0 }).catch((e) => isRedlockError(e) ? e.name : String(e));
  const releasedA = await (await a.release()).settled;
  const clients = urls.map((u) => new Redis(u));
  const byClient = new Redlock(clients, { keyPrefix: '${prefix}', nodeTimeoutMs: 2000 });
  const b = await byClient.acquire('invoice-42', 5000);
  const releasedB = await (await b.release()).settled;
  await byUrl.quit(); await byClient.quit(); clients.forEach((c) => c.disconnect());
  console.log(JSON.stringify({ a: String(a.fence), b: String(b.fence), held, deleted: [releasedA.deleted, releasedB.deleted], node: process.version, dual }));
`;

/** Relative references a shipped file makes to other files, as paths inside the package. */
function referencesOf(file: string, text: string): Array<{ from: string; to: string; candidates: string[] }> {
  const dir = dirname(file);
  const out: Array<{ from: string; to: string; candidates: string[] }> = [];
  const add = (to: string, candidates: (p: string) => string[]) => {
    const target = normalize(join(dir, to));
    out.push({ from: file, to, candidates: candidates(target) });
  };
  for (const m of text.matchAll(/sourceMappingURL=(\S+)/g)) if (!m[1]!.startsWith('data:')) add(m[1]!, (t) => [t]);
  if (file.endsWith('.map')) {
    const map = JSON.parse(text) as { sources?: string[]; sourcesContent?: unknown[]; file?: string };
    // A source is fine if it is shipped, or if its content travels in the map (sourcesContent).
    map.sources?.forEach((source, i) => {
      if (typeof map.sourcesContent?.[i] !== 'string') add(source, (t) => [t]);
    });
    if (map.file) add(map.file, (t) => [t]);
    return out;
  }
  const specifiers = [
    ...text.matchAll(/\bfrom\s+['"](\.{1,2}\/[^'"]+)['"]/g),
    ...text.matchAll(/\b(?:import|require)\s*\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g),
    ...text.matchAll(/\/\/\/\s*<reference\s+path=['"]([^'"]+)['"]/g),
  ].map((m) => m[1]!);
  for (const spec of specifiers) {
    if (/\.d\.c?ts$/.test(file)) {
      // TypeScript maps a .js / .cjs / .mjs specifier to its declaration file.
      add(spec, (t) => [t, t.replace(/\.js$/, '.d.ts'), t.replace(/\.cjs$/, '.d.cts'), t.replace(/\.mjs$/, '.d.mts'), `${t}.d.ts`]);
    } else add(spec, (t) => [t]);
  }
  return out;
}

describe('the tarball', () => {
  it('npm pack --dry-run lists the built files, README, CHANGELOG, LICENSE and package.json, and the tarball holds exactly those', () => {
    const inTarball = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .map((f) => f.replace(/^package\//, ''))
      .sort();
    expect(inTarball).toEqual(dryRunFiles);
    for (const f of [
      'README.md',
      'CHANGELOG.md',
      'LICENSE',
      'package.json',
      'dist/index.js',
      'dist/index.cjs',
      'dist/index.d.ts',
      'dist/index.d.cts',
    ])
      expect(dryRunFiles).toContain(f);
    expect(dryRunFiles.filter((f) => !/^(dist\/|README\.md$|CHANGELOG\.md$|LICENSE$|package\.json$)/.test(f))).toEqual([]);
    // The licence is the package.json's; the changelog has an entry for this version.
    const unpacked = join(work, 'unpacked', 'package');
    const pkg = JSON.parse(readFileSync(join(unpacked, 'package.json'), 'utf8')) as { license: string; version: string };
    expect(pkg.license).toBe('MIT');
    expect(readFileSync(join(unpacked, 'LICENSE'), 'utf8')).toMatch(/^MIT License/);
    expect(readFileSync(join(unpacked, 'CHANGELOG.md'), 'utf8')).toContain(`## [${pkg.version}]`);
  });

  it("no shipped file carries this machine's absolute paths (the repository, the home directory, the temp directory)", () => {
    const unpacked = join(work, 'unpacked', 'package');
    const machinePaths = [root, packageDir, homedir(), tmpdir()].filter((p) => p.length > 1);
    const hits: string[] = [];
    for (const f of dryRunFiles) {
      const text = readFileSync(join(unpacked, f), 'utf8');
      for (const p of machinePaths) if (text.includes(p)) hits.push(`${f}: ${p}`);
    }
    expect(hits).toEqual([]);
  });

  it('every relative reference of a .d.ts/.d.cts, .js/.cjs and .map resolves to a file in the tarball', () => {
    const unpacked = join(work, 'unpacked', 'package');
    const shipped = new Set(dryRunFiles.map((f) => normalize(f)));
    const refs = dryRunFiles
      .filter((f) => /\.(d\.c?ts|c?js|map)$/.test(f))
      .flatMap((f) => referencesOf(f, readFileSync(join(unpacked, f), 'utf8')));
    // The declarations do import each other (shared chunks), so this checks something.
    expect(refs.filter((r) => /\.d\.c?ts$/.test(r.from)).length).toBeGreaterThan(4);
    const dangling = refs.filter((r) => !r.candidates.some((c) => shipped.has(c) && !relative('.', c).startsWith('..')));
    expect(dangling.map((r) => `${r.from} -> ${r.to}`)).toEqual([]);
    // Decided: no source maps and no declaration maps (tsup.config.ts says why).
    expect(dryRunFiles.filter((f) => f.endsWith('.map'))).toEqual([]);
  });

  it('the README names every entry point of the exports map', () => {
    const unpacked = join(work, 'unpacked', 'package');
    const pkg = JSON.parse(readFileSync(join(unpacked, 'package.json'), 'utf8')) as { name: string; exports: Record<string, unknown> };
    const readme = readFileSync(join(unpacked, 'README.md'), 'utf8');
    const entries = Object.keys(pkg.exports).map((k) => (k === '.' ? pkg.name : `${pkg.name}/${k.slice(2)}`));
    expect(entries.length).toBeGreaterThanOrEqual(3);
    expect(entries.filter((e) => !readme.includes(`\`${e}\``))).toEqual([]);
  });
});

// The installed programs use a 2 s node timeout: what they test is the packaging, and at the
// default 100 ms a loaded machine timed out every node's release (deleted: 0 where 3 was due).
const CJS_SCRIPT = (urls: string[], prefix: string) => `
  const { Redlock, isRedlockError } = require('@redlock-console/redlock');
  const { Redis } = require('ioredis');
  (async () => {
    const clients = ${JSON.stringify(urls)}.map((u) => new Redis(u));
    const r = new Redlock(clients, { keyPrefix: '${prefix}', nodeTimeoutMs: 2000 });
    await r.markNodesClean();
    const first = await r.using('job', 5000, async (signal, l) => l.fence);
    const held = await r.acquire('job', 5000);
    const refused = await r.acquire('job', 5000, { retryCount: 0 }).catch((e) => isRedlockError(e) ? e.name : String(e));
    const released = await (await held.release()).settled;
    await r.quit(); clients.forEach((c) => c.disconnect());
    console.log(JSON.stringify({ first: String(first), second: String(held.fence), refused, deleted: released.deleted, ioredis: require('ioredis/package.json').version }));
  })().catch((e) => { console.error(e); process.exit(1); });
`;

const TS_PROGRAM = `
  import { Redlock, isRedlockError, type Lock, type RedlockSettings, type AcquireOptions, type ReleaseResult } from '@redlock-console/redlock';
  import { quorumSize } from '@redlock-console/redlock/vocabulary';
  import { Redis } from 'ioredis';
  const settings: Partial<RedlockSettings> = { keyPrefix: 'ts:', maxTtlMs: 60_000, writeCoalescing: 'io' };
  const options: AcquireOptions = { retryCount: 3, maxWaitMs: 1_000, metadata: { owner: 'me' } };
  const redlock = new Redlock([new Redis('redis://127.0.0.1:6379'), 'redis://127.0.0.1:6380'], settings);
  redlock.on('lock-lost', ({ lock, reason }) => console.log(lock.resources, reason.message));
  export async function main(): Promise<number | null> {
    const lock: Lock = await redlock.acquire('x', 1_000, options);
    const released: ReleaseResult = await (await lock.release()).settled;
    const q: number = quorumSize(redlock.nodeCount);
    return released.deleted >= q ? lock.fence : null;
  }
  export const known = (e: unknown) => isRedlockError(e) && e.name;
`;

describe('the packed lock core, installed from its tarball with ioredis 6', () => {
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
        const r = new Redlock(${JSON.stringify(nodes.map((n) => n.url))}, { keyPrefix: 'pack-cjs:', nodeTimeoutMs: 2000 });
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
    // Two tsc runs: ~20 s on an idle two-core machine, 130 s seen at load 15.
  }, 300_000);
});

describe.each(IOREDIS)('installed beside ioredis %s', (version) => {
  it('an ESM program (URLs and clients of that ioredis) and a CommonJS program take, refuse and release fenced locks', () => {
    const urls = nodes.map((n) => n.url);
    const esm = JSON.parse(runNode('esm.mjs', ESM_SCRIPT(urls, `pack-${version}-esm:`), process.execPath, appOf(version))) as {
      a: string;
      b: string;
      held: string;
      deleted: number[];
    };
    expect(esm).toMatchObject({ held: 'LockContendedError', deleted: [3, 3] });
    expect(BigInt(esm.b)).toBeGreaterThan(BigInt(esm.a));
    const cjs = JSON.parse(runNode('cjs.cjs', CJS_SCRIPT(urls, `pack-${version}-cjs:`), process.execPath, appOf(version))) as {
      first: string;
      second: string;
      refused: string;
      deleted: number;
      ioredis: string;
    };
    expect(cjs).toMatchObject({ refused: 'LockContendedError', deleted: 3 });
    expect(BigInt(cjs.second)).toBeGreaterThan(BigInt(cjs.first));
    expect(cjs.ioredis === version || cjs.ioredis.startsWith(`${version}.`)).toBe(true);
  }, 60_000);

  it('a TypeScript program typechecks against it under moduleResolution node16 (ESM and CJS files) and bundler', async () => {
    const dir = appOf(version);
    const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    const base = { target: 'es2022', strict: true, noEmit: true, types: ['node'], typeRoots: [join(root, 'node_modules', '@types')] };
    writeFileSync(join(dir, 'program.mts'), TS_PROGRAM);
    writeFileSync(
      join(dir, 'program.cts'),
      TS_PROGRAM.replace(
        "import { quorumSize } from '@redlock-console/redlock/vocabulary';",
        "import { quorumSize } from '@redlock-console/redlock';",
      ),
    );
    writeFileSync(join(dir, 'program.ts'), TS_PROGRAM);
    writeFileSync(
      join(dir, 'tsconfig.node16.json'),
      JSON.stringify({ compilerOptions: { ...base, module: 'node16', moduleResolution: 'node16' }, files: ['program.mts', 'program.cts'] }),
    );
    writeFileSync(
      join(dir, 'tsconfig.bundler.json'),
      JSON.stringify({ compilerOptions: { ...base, module: 'esnext', moduleResolution: 'bundler' }, files: ['program.ts'] }),
    );
    const check = (config: string) =>
      run(process.execPath, [tsc, '-p', config], { cwd: dir, encoding: 'utf8' }).then(
        () => 'ok',
        (e: { stdout?: string }) => String(e.stdout),
      );
    expect(await Promise.all([check('tsconfig.node16.json'), check('tsconfig.bundler.json')])).toEqual(['ok', 'ok']);
  }, 180_000);
});

const NODE_REDIS_ESM = (urls: string[], prefix: string) => `
  import { Redlock, isRedlockError } from '@redlock-console/redlock';
  import { createClient } from 'redis';
  const clients = await Promise.all(${JSON.stringify(urls)}.map((url) => createClient({ url, RESP: 3 }).connect()));
  const r = new Redlock(clients, { keyPrefix: '${prefix}', nodeTimeoutMs: 2000 });
  // Fresh masters: the first acquire is refused and says what to do.
  const fresh = await r.acquire('invoice-7', 5000, { retryCount: 0 }).catch((e) => ({ name: e.name, names: /markNodesClean\\(\\)/.test(e.message), missing: e.missingSentinel?.length ?? 0 }));
  const marked = await r.markNodesClean();
  const a = await r.acquire('invoice-7', 5000);
  const held = await r.acquire('invoice-7', 5000, { retryCount: 0 }).catch((e) => isRedlockError(e) ? e.name : String(e));
  const released = await (await a.release()).settled;
  const b = await r.acquire('invoice-7', 5000);
  await b.release();
  await r.quit();
  await Promise.all(clients.map((c) => c.quit()));
  console.log(JSON.stringify({ fresh, complete: marked.complete, held, deleted: released.deleted, a: String(a.fence), b: String(b.fence) }));
`;

const NODE_REDIS_CJS = (urls: string[], prefix: string) => `
  const { Redlock } = require('@redlock-console/redlock');
  const { createClient } = require('redis');
  (async () => {
    const clients = await Promise.all(${JSON.stringify(urls)}.map((url) => createClient({ url }).connect()));
    const r = new Redlock(clients, { keyPrefix: '${prefix}', nodeTimeoutMs: 2000 });
    await r.markNodesClean();
    const first = await r.acquire('job', 5000);
    // A waiter that would poll only every 10 s: the release's pub/sub message wakes it.
    const started = Date.now();
    const waiting = r.acquire('job', 5000, { retryCount: 3, retryDelayMs: 10000 });
    setTimeout(() => void first.release(), 200);
    const second = await waiting;
    const waitedMs = Date.now() - started;
    await second.release();
    await r.quit();
    await Promise.all(clients.map((c) => c.quit()));
    console.log(JSON.stringify({ first: String(first.fence), second: String(second.fence), waitedMs }));
  })().catch((e) => { console.error(e); process.exit(1); });
`;

const NODE_REDIS_TS = `
  import { Redlock, nodeRedisClient, type MarkCleanResult, type RedlockNodeTarget } from '@redlock-console/redlock';
  import { createClient } from 'redis';
  const nodes: RedlockNodeTarget[] = [createClient(), nodeRedisClient(createClient()), 'redis://127.0.0.1:6381'];
  export async function main(): Promise<boolean> {
    const r: MarkCleanResult = await new Redlock(nodes).markNodesClean();
    return r.complete;
  }
`;

describe('installed beside node-redis 5 (no ioredis client in the program)', () => {
  it('an ESM program is told to mark fresh masters clean, then takes, refuses and releases fenced locks through node-redis clients (RESP3)', () => {
    const dir = appOf('node-redis');
    const out = JSON.parse(
      runNode(
        'esm.mjs',
        NODE_REDIS_ESM(
          nodes.map((n) => n.url),
          'pack-node-redis-esm:',
        ),
        process.execPath,
        dir,
      ),
    ) as {
      fresh: { name: string; names: boolean; missing: number };
      complete: boolean;
      held: string;
      deleted: number;
      a: string;
      b: string;
    };
    // Refused once a quorum is out of reach: 2 of 3 nodes' answers suffice, the third may not be awaited.
    expect(out.fresh).toMatchObject({ name: 'QuorumUnavailableError', names: true });
    expect(out.fresh.missing).toBeGreaterThanOrEqual(2);
    expect(out).toMatchObject({ complete: true, held: 'LockContendedError', deleted: 3 });
    expect(BigInt(out.b)).toBeGreaterThan(BigInt(out.a));
  }, 60_000);

  it('a CommonJS program (RESP2): a waiter polling every 10 s is woken by the release and gets a higher fence', () => {
    const dir = appOf('node-redis');
    const out = JSON.parse(
      runNode(
        'cjs.cjs',
        NODE_REDIS_CJS(
          nodes.map((n) => n.url),
          'pack-node-redis-cjs:',
        ),
        process.execPath,
        dir,
      ),
    ) as {
      first: string;
      second: string;
      waitedMs: number;
    };
    expect(BigInt(out.second)).toBeGreaterThan(BigInt(out.first));
    expect(out.waitedMs).toBeLessThan(8_000);
  }, 60_000);

  it('a TypeScript program passing node-redis clients typechecks under moduleResolution bundler', async () => {
    const dir = appOf('node-redis');
    const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    writeFileSync(join(dir, 'program.ts'), NODE_REDIS_TS);
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { target: 'es2022', strict: true, noEmit: true, module: 'esnext', moduleResolution: 'bundler', types: ['node'] },
        files: ['program.ts'],
      }),
    );
    const result = await run(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: dir, encoding: 'utf8' }).then(
      () => 'ok',
      (e: { stdout?: string }) => String(e.stdout),
    );
    expect(result).toBe('ok');
  }, 180_000);
});
